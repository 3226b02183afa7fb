import * as restate from '@restatedev/restate-sdk'
import { durableCalls } from '@restatedev/vercel-ai-middleware'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'
import type { BenchRunRequest, BenchRunResult } from './restate-services'
import { echoTool } from './scripted-run'
import { scriptedLanguageModel } from './scripted-language-model'

/** The peer's object name in the bench endpoint. */
export const PEER_AGENT = 'PeerAgent'

/**
 * The peer a user would pick: AI SDK 7's `generateText` on the scripted model wrapped with
 * `@restatedev/vercel-ai-middleware`'s `durableCalls(ctx)` (each model call one `ctx.run`), and the bench's echo tool
 * run in `ctx.run`, as the middleware's examples write their tools. Same run shape as `BenchAgent` and `HandLoop`,
 * history in the SDK's local message list, timed inside the handler.
 */
export const peerAgent = restate.object({
  name: PEER_AGENT,
  handlers: {
    run: async (ctx: restate.ObjectContext, request: BenchRunRequest): Promise<BenchRunResult> => {
      const echo = echoTool(request.outputBytes)
      const model = wrapLanguageModel({ model: scriptedLanguageModel(request), middleware: durableCalls(ctx) })
      const tools = {
        echo: tool({
          description: echo.spec.description,
          inputSchema: jsonSchema<{ turn: number }>({ type: 'object', properties: { turn: { type: 'number' } }, required: ['turn'] }),
          execute: async (input: { turn: number }) => ctx.run('echo', async () => echo.execute(input, undefined as never)),
        }),
      }
      const started = performance.now()
      const result = await generateText({ model, tools, prompt: 'benchmark run', stopWhen: stepCountIs(request.toolTurns + 5) })
      const wallMs = performance.now() - started
      if (result.text !== 'done') throw new restate.TerminalError(`peer run ended without the answer after ${result.steps.length} steps`)
      return { wallMs, turns: result.steps.length, invocationId: ctx.request().id, lastToolResult: '' }
    },
  },
})
