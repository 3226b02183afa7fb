import * as restate from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, startRestateHarness } from '../helpers/restate/restate-harness'

/*
 * The handler timeouts the services use, shrunk: inactivity 1 s stands for 60 s, abort 20 s for 30 min. A step that
 * runs past the inactivity timeout (4 s here, 20 min in production) still completes, and a handler parked on an
 * awakeable suspends once the inactivity timeout passes.
 */
const INACTIVITY_MS = 1_000
const LONG_STEP_MS = 4_000
const stepRuns = new Map<string, number>()

const probe = restate.object({
  name: 'TimeoutProbe',
  handlers: {
    longStep: restate.handlers.object.exclusive({ inactivityTimeout: INACTIVITY_MS, abortTimeout: 20_000 }, async (ctx: restate.ObjectContext): Promise<string> => {
      const value = await ctx.run('long', async () => {
        stepRuns.set(ctx.key, (stepRuns.get(ctx.key) ?? 0) + 1)
        await new Promise(resolve => setTimeout(resolve, LONG_STEP_MS))
        return 'finished'
      })
      return value
    }),
    park: restate.handlers.object.exclusive({ inactivityTimeout: INACTIVITY_MS, abortTimeout: 20_000 }, async (ctx: restate.ObjectContext): Promise<string> => {
      const awakeable = ctx.awakeable<string>()
      ctx.set('awakeable', awakeable.id)
      return awakeable.promise
    }),
    awakeableId: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<string | null> => ctx.get<string>('awakeable')),
  },
})

describe('handler timeouts on a real server', () => {
  let harness: RestateHarness | undefined
  beforeAll(async () => { harness = await startRestateHarness({ services: [probe] }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('lets a step that runs past the inactivity timeout finish once, within the abort timeout', async () => {
    const response = await harness!.call<string>('TimeoutProbe/long-1/longStep')
    expect(response).toMatchObject({ status: 200, body: 'finished' })
    expect(stepRuns.get('long-1')).toBe(1)
  })

  it('suspends a handler parked on an awakeable once the inactivity timeout passes', async () => {
    const invocationId = await harness!.send('TimeoutProbe/park-1/park')
    const awakeableId = await harness!.waitFor(async () => (await harness!.call<string | null>('TimeoutProbe/park-1/awakeableId')).body, 20_000, 'the awakeable id')
    await harness!.waitFor(async () => {
      const rows = await harness!.query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`)
      return rows[0]?.status === 'suspended'
    }, 20_000, 'the parked invocation to suspend')
    expect(await harness!.resolveAwakeable(awakeableId, 'answer')).toBeLessThan(300)
    expect(await harness!.attach<string>(invocationId)).toMatchObject({ status: 200, body: 'answer' })
  })
})
