import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import { createMemoryJournal, createMemoryJournalRuntime, SimulatedCrashError } from 'zidane/testing'
import type { MemoryJournal } from 'zidane/testing'
import { runDurableContract } from './contract'

let journal: MemoryJournal = createMemoryJournal()
runDurableContract({
  name: 'in-memory journal runtime',
  create: () => { journal = createMemoryJournal(); return createMemoryJournalRuntime({ journal }) },
  reopen: () => createMemoryJournalRuntime({ journal }),
})

describe('in-memory journal crash simulation', () => {
  it('reports a step cut off by a crash as resumed in the next process', async () => {
    const shared = createMemoryJournal()
    const first = createMemoryJournalRuntime({ journal: shared, crashAt: { step: 'c1', when: 'during' } })
    await expect(first.step(stepKey('run_x', 'tool', 't1', 'c1'), async () => 'lost')).rejects.toBeInstanceOf(SimulatedCrashError)
    const second = createMemoryJournalRuntime({ journal: shared })
    const resumed = await second.step(stepKey('run_x', 'tool', 't1', 'c1'), async attempt => attempt.resumed)
    expect(resumed).toBe(true)
  })

  it('rejects everything a crashed runtime does afterwards', async () => {
    const runtime = createMemoryJournalRuntime({ journal: createMemoryJournal() })
    runtime.crash()
    await expect(runtime.step(stepKey('run_y', 'model', 't1'), async () => 1)).rejects.toBeInstanceOf(SimulatedCrashError)
  })
})
