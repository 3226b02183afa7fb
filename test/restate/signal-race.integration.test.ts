import * as restate from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'

/**
 * What the deployment's steering check (`watchSteps`, `services/agent-object/inbox-steering.ts`) relies on in the
 * SDK, on a real server: whether an awakeable completed before a step is decided by the journal only when the two are
 * awaited together. Raced against a step that already completed, the awakeable never wins, even when its completion
 * is journaled first: the combinator settles with the completed step before it looks at the awakeable.
 */
interface ProbeInput { awaitStepFirst: boolean; resolveInStep: boolean }

const sleepMs = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

function probeObject(harness: () => RestateHarness | undefined): restate.VirtualObjectDefinition<'signal_probe', unknown> {
  return restate.object({
    name: 'signal_probe',
    handlers: {
      run: async (ctx: restate.ObjectContext, input: ProbeInput): Promise<boolean> => {
        const awakeable = ctx.awakeable<null>()
        const step = ctx.run('work', async () => {
          // Resolved from outside while the step runs: its completion is journaled before the step's.
          if (input.resolveInStep) {
            await harness()?.resolveAwakeable(awakeable.id, null)
            await sleepMs(300)
          }
          return 'done'
        })
        const fired = awakeable.promise.map(() => true)
        if (input.awaitStepFirst) {
          await step
          return restate.RestatePromise.race([fired, step.map(() => false)])
        }
        const [won] = await restate.RestatePromise.all([restate.RestatePromise.race([fired, step.map(() => false)]), step])
        return won
      },
    },
  })
}

describe.each(REPLAY_MODES)('an awakeable raced against a step ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [probeObject(() => harness)], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  const probe = async (key: string, input: ProbeInput): Promise<{ won: boolean; signalFirst: boolean }> => {
    const result = await h().call<boolean>(`signal_probe/${key}-${alwaysReplay ? 'r' : 'n'}/run`, input)
    expect(result.status).toBe(200)
    const rows = await h().query<{ index: number; entry_type: string }>(`SELECT index, entry_type FROM sys_journal WHERE id = '${result.invocationId ?? ''}' ORDER BY index`)
    const signal = rows.findIndex(row => row.entry_type === 'Notification: Signal')
    const run = rows.findIndex(row => row.entry_type === 'Notification: Run')
    return { won: result.body, signalFirst: signal >= 0 && signal < run }
  }

  it('awaited with the step, wins exactly when its completion is journaled first', async () => {
    expect(await probe('together-fired', { awaitStepFirst: false, resolveInStep: true })).toEqual({ won: true, signalFirst: true })
    expect(await probe('together-quiet', { awaitStepFirst: false, resolveInStep: false })).toEqual({ won: false, signalFirst: false })
  }, 60_000)

  it('raced against the step once it completed, loses even when its completion is journaled first', async () => {
    expect(await probe('after-fired', { awaitStepFirst: true, resolveInStep: true })).toEqual({ won: false, signalFirst: true })
  }, 60_000)
})
