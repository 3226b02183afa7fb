import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../src/agent/create-agent'
import { createSession, loadSession } from '../../src/session/session'
import { scriptedProvider } from '../../src/testing/index'
import type { ToolDef } from '../../src/tools/tool'
import { restateRuntime } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

const echo: ToolDef = { spec: { name: 'echo', description: 'Echo.', inputSchema: { type: 'object' } }, execute: async () => 'echoed' }

/** A run as a library user writes it: the runtime's default session store, the session opened or created, one tool turn. */
const clockProbe = restate.object({
  name: 'ClockProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<{ status: string; startedAt: number; createdAt: number }> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: `${ctx.key}:${ctx.request().id}` })
      const store = durable.stores.session
      const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
      const provider = scriptedProvider(request => (request.messages.length === 1 ? { toolCalls: [{ name: 'echo', input: {} }] } : { text: 'done' }))
      const stats = await createAgent({ provider, tools: [echo], durable, session }).run({ prompt: 'echo' })
      const stored = await store.load(ctx.key)
      return { status: stats.status, startedAt: stats.startedAt, createdAt: stored?.createdAt ?? 0 }
    },
  },
})

describe.each(REPLAY_MODES)('clock reads of a run on the default session store ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [clockProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  /** The `ctx.date.now()` reads (unnamed runs) the journal of `invocationId` holds. */
  const clockReads = async (invocationId: string | undefined): Promise<number> => {
    const rows = await h().query<{ count: number }>(`SELECT count(*) AS count FROM sys_journal WHERE id = '${String(invocationId)}' AND entry_type = 'Command: Run' AND (name IS NULL OR name = '')`)
    return Number(rows[0]?.count ?? -1)
  }

  it('journals one clock read per run: the session stamps and the run start share it, new session or stored', async () => {
    const key = `clock-${alwaysReplay}`
    const first = await h().call<{ status: string; startedAt: number; createdAt: number }>(`ClockProbe/${key}/run`)
    expect(first.status).toBe(200)
    expect(first.body.status).toBe('completed')
    // A new session: its creation stamp and the run's start are one journaled reading.
    expect(first.body.startedAt).toBe(first.body.createdAt)
    expect(await clockReads(first.invocationId)).toBe(1)
    const second = await h().call<{ status: string; startedAt: number }>(`ClockProbe/${key}/run`)
    expect(second.status).toBe(200)
    expect(second.body.status).toBe('completed')
    expect(second.body.startedAt).toBeGreaterThanOrEqual(first.body.startedAt)
    expect(await clockReads(second.invocationId)).toBe(1)
  })
})
