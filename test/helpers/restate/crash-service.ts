/**
 * A Restate endpoint run in a child process by the crash tests (`tsx crash-service.ts`). Env: `PORT` to listen on,
 * `LEDGER` (a JSON-lines file every step closure appends to), `MARKER` (created by the step that kills its own
 * process, so the restarted process lets that step finish).
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { stepKey } from '../../../src/durable/runtime'
import { restateAwakeableTool } from '../../../src/restate/awakeable-tool'
import { restateRuntime } from '../../../src/restate/runtime'
import { restateTool } from '../../../src/restate/tool'
import type { ToolResult } from '../../../src/tools/tool'
import { toolContext } from './tool-context'

const ledger = process.env.LEDGER ?? ''
const marker = process.env.MARKER ?? ''

function record(entry: Record<string, unknown>): void {
  appendFileSync(ledger, `${JSON.stringify({ ...entry, pid: process.pid })}\n`)
}

const crashProbe = restate.object({
  name: 'CrashProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<string[]> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const results: string[] = []
      for (const name of ['a', 'b', 'c']) {
        results.push(await durable.step(stepKey('run', 'tool', name), async attempt => {
          record({ step: name, resumed: attempt.resumed })
          if (name === 'b' && !existsSync(marker)) {
            writeFileSync(marker, String(process.pid))
            await new Promise(resolve => setTimeout(resolve, 300)) // let the run command reach the server
            process.kill(process.pid, 'SIGKILL')
            await new Promise(() => {})
          }
          return `${name}:${attempt.resumed}`
        }))
      }
      return results
    },
  },
})

/** One at-most-once step that kills its process the instant its closure starts (unless `MARKER` exists). */
const onceProbe = restate.object({
  name: 'OnceProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<string> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      return durable.step(stepKey('run', 'tool', 'once'), async attempt => {
        record({ step: 'once', resumed: attempt.resumed })
        if (!existsSync(marker)) {
          writeFileSync(marker, String(process.pid))
          process.kill(process.pid, 'SIGKILL')
          await new Promise(() => {})
        }
        return `once:${attempt.resumed}`
      }, { atMostOnce: true })
    },
  },
})

/** An awakeable tool whose notify writes the id to the ledger; the test answers it while this process is down. */
const askProbe = restate.object({
  name: 'AskProbe',
  handlers: {
    ask: async (ctx: restate.ObjectContext): Promise<ToolResult> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise })
      const ask = restateAwakeableTool<string>({
        ctx, name: 'ask_user', description: 'Ask.', inputSchema: { type: 'object' }, promises: RestatePromise,
        notify: ({ awakeableId }) => record({ step: 'notify', awakeableId }),
      })
      return ask.execute({ question: 'ok?' }, toolContext(runtime, { callId: 'call-ask' })) as Promise<ToolResult>
    },
  },
})

/** A long job through `durableStart`: start and register write the ledger; the test kills this process while parked. */
const jobProbe = restate.object({
  name: 'JobProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<ToolResult> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const job = restateTool<string, string>({ spec: { name: 'build', description: 'Build.', inputSchema: { type: 'object' } }, execute: async () => 'never called' }, ctx, {
        durableStart: {
          start: () => { record({ step: 'start' }); return `job-${ctx.key}` },
          wait: {
            register: (token, awakeableId) => { record({ step: 'register', token, awakeableId }) },
            result: (token, resumed) => `${token} ended: ${String(resumed)}`,
            promises: RestatePromise,
          },
        },
      })
      return job.execute({}, toolContext(runtime, { callId: 'call-build' })) as Promise<ToolResult>
    },
  },
})

const port = await restate.serve({ services: [crashProbe, onceProbe, askProbe, jobProbe], port: Number(process.env.PORT), logger: () => {} })
console.log(`listening ${port}`)
