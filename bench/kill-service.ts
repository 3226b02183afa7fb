/**
 * The services process of the kill-to-resumed benchmark (`node --import tsx bench/kill-service.ts`; one process, so
 * a SIGKILL kills the service itself). Env: `PORT`, `STAMP_FILE`. Serves `KillProbe`, our agent on `restateRuntime`;
 * every model call and tool call that executes live (not replayed) appends `{ pid, key, turn, at }` to the stamp file.
 */
import { appendFileSync } from 'node:fs'
import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import { restateRuntime } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import type { ScriptedRunShape } from './lib/scripted-run'
import { benchProvider, echoTool } from './lib/scripted-run'

const stampFile = process.env.STAMP_FILE ?? ''
const absoluteNow = (): number => performance.timeOrigin + performance.now()

const killProbe = restate.object({
  name: 'KillProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext, shape: ScriptedRunShape): Promise<{ turns: number }> => {
      const stamp = (turn: number): void => appendFileSync(stampFile, `${JSON.stringify({ pid: process.pid, key: ctx.key, turn, at: absoluteNow() })}\n`)
      const durable = restateRuntime(ctx, { promises: restate.RestatePromise, idSeed: ctx.key })
      const store = durable.stores.session
      const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
      const agent = createAgent({ provider: benchProvider(shape, stamp), tools: [echoTool(undefined, stamp)], durable, session, behavior: { maxTurns: shape.toolTurns + 5 } })
      const stats = await agent.run({ prompt: 'benchmark run' })
      return { turns: stats.turns }
    },
  },
})

const port = await restate.serve({ services: [killProbe], port: Number(process.env.PORT), logger: () => undefined })
process.stdout.write(`ready ${absoluteNow()} ${port}\n`)
