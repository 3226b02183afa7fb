import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSession, loadSession } from '../../src/session/session'
import type { SessionTurn } from '../../src/session/types'
import { restateSessionStore } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

const TURNS = 300
const retriedOnce = new Set<string>()

function turn(index: number): SessionTurn {
  return { id: `t${index}`, runId: 'run_1', role: index % 2 === 0 ? 'user' : 'assistant', content: [{ type: 'text', text: `turn ${index}` }], createdAt: 1_000 + index }
}

/** What a load saw: the turn ids in order (the window a run would send). */
interface Loaded { ids: string[] }

/**
 * A session object under lazy state, as the deployment's `run` handler: `grow` writes turns through the store, `load`
 * reads the window with the durable combinators (every read issued at once) and fails its first attempt, so the
 * retry replays the journal of those concurrent reads.
 */
const windowProbe = restate.object({
  name: 'WindowProbe',
  handlers: {
    grow: restate.handlers.object.exclusive({ enableLazyState: true }, async (ctx: restate.ObjectContext): Promise<number> => {
      const clock = { now: () => 1 }
      const store = restateSessionStore(ctx, { clock })
      const session = (await loadSession(store, ctx.key, { clock })) ?? (await createSession({ id: ctx.key, store, clock }))
      for (let index = 0; index < TURNS; index += 50) await session.appendTurns(Array.from({ length: 50 }, (_, offset) => turn(index + offset)))
      return session.turns.length
    }),
    load: restate.handlers.object.exclusive({ enableLazyState: true }, async (ctx: restate.ObjectContext): Promise<Loaded> => {
      const store = restateSessionStore(ctx, { promises: RestatePromise, clock: { now: () => 1 } })
      const session = await loadSession(store, ctx.key)
      const ids = session?.turns.map(stored => stored.id) ?? []
      await ctx.run('between', () => 'a step after the reads, so the retry replays them')
      if (!retriedOnce.has(ctx.key)) {
        retriedOnce.add(ctx.key)
        throw new Error('fail the first attempt: the retry replays the reads')
      }
      return { ids }
    }),
  },
})

describe.each(REPLAY_MODES)('a session window read at once on a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  beforeAll(async () => { harness = await startRestateHarness({ services: [windowProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('loads every turn in order with the reads issued together, and the retry replays them without a mismatch', async () => {
    const key = `window-${alwaysReplay}`
    const h = harness as RestateHarness
    expect((await h.call<number>(`WindowProbe/${key}/grow`)).body).toBe(TURNS)
    const loaded = await h.call<Loaded>(`WindowProbe/${key}/load`)
    expect(loaded.status).toBe(200)
    expect(loaded.body.ids).toEqual(Array.from({ length: TURNS }, (_, index) => `t${index}`))
    expect(h.logs()).not.toMatch(/RT0016|journal mismatch/i)
  })
})
