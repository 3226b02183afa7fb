import { describe, expect, it } from 'vitest'
import type { DurableRuntime } from 'zidane/durable'
import { stepKey } from 'zidane/durable'

/** A runtime under test, and (for durable ones) how to make "the next process" on the same journal. */
export interface ContractSubject {
  name: string
  create(): DurableRuntime
  /** Creates a second runtime on the same journal, as a restarted process would. Absent for non-durable runtimes. */
  reopen?(): DurableRuntime
}

/** The durable-runtime contract suite: run it against any runtime. */
export function runDurableContract(subject: ContractSubject): void {
  describe(`durable contract: ${subject.name}`, () => {
    it('runs a step once and returns its result', async () => {
      const runtime = subject.create()
      let calls = 0
      const value = await runtime.step(stepKey('run_a', 'tool', 't1', 'c1'), async () => { calls++; return { answer: 42 } })
      expect(value).toEqual({ answer: 42 })
      expect(calls).toBe(1)
    })

    it('tells a fresh step it is not resumed', async () => {
      const runtime = subject.create()
      const seen = await runtime.step(stepKey('run_b', 'tool', 't1', 'c1'), async attempt => attempt.resumed)
      expect(seen).toBe(false)
    })

    it('joins concurrent steps with all(), which overlap in time', async () => {
      const runtime = subject.create()
      const spans: Array<[number, number]> = []
      const work = (name: string) => runtime.step(stepKey('run_c', 'tool', 't1', name), async () => {
        const start = Date.now()
        await new Promise(resolve => setTimeout(resolve, 40))
        spans.push([start, Date.now()])
        return name
      })
      const results = await runtime.all([work('x'), work('y'), work('z')])
      expect(results).toEqual(['x', 'y', 'z'])
      const latestStart = Math.max(...spans.map(span => span[0]))
      const earliestEnd = Math.min(...spans.map(span => span[1]))
      expect(latestStart).toBeLessThan(earliestEnd)
    })

    it('keeps an awakeable answer given before anyone waits', async () => {
      const runtime = subject.create()
      const awakeable = runtime.awakeable<string>(stepKey('run_d', 'custom', 'q1'))
      await runtime.resolveAwakeable(awakeable.id, 'yes')
      await expect(awakeable.wait()).resolves.toEqual({ timedOut: false, value: 'yes' })
    })

    it('times an awakeable out', async () => {
      const runtime = subject.create()
      const awakeable = runtime.awakeable<string>(stepKey('run_e', 'custom', 'q1'), { timeoutMs: 20 })
      await expect(awakeable.wait()).resolves.toEqual({ timedOut: true })
    })

    it('mints distinct ids and reads a clock', async () => {
      const runtime = subject.create()
      expect(runtime.uuid()).not.toBe(runtime.uuid())
      expect(await runtime.now()).toBeGreaterThan(1_600_000_000_000)
    })

    it('provides a session store that round-trips a session', async () => {
      const runtime = subject.create()
      const store = runtime.stores.session
      await store.save({ schemaVersion: 1, id: 's-contract', status: 'idle', turns: [], runs: [], createdAt: 1, updatedAt: 1, metadata: {} })
      const turn = { id: 't1', runId: 'r1', role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }], createdAt: 2 }
      await store.appendTurns('s-contract', [turn])
      await store.appendTurns('s-contract', [turn])
      const loaded = await store.load('s-contract')
      expect(loaded?.turns).toHaveLength(1)
    })

    if (subject.reopen) {
      const reopen = subject.reopen.bind(subject)
      it('replays a recorded step in the next process without running it', async () => {
        const first = subject.create()
        await first.step(stepKey('run_f', 'model', 't1'), async () => 'recorded')
        let ran = false
        const value = await reopen().step(stepKey('run_f', 'model', 't1'), async () => { ran = true; return 'again' })
        expect(value).toBe('recorded')
        expect(ran).toBe(false)
      })
      it('keeps an awakeable answer across processes', async () => {
        const first = subject.create()
        const awakeable = first.awakeable<string>(stepKey('run_g', 'custom', 'q1'))
        await reopen().resolveAwakeable(awakeable.id, 'from elsewhere')
        await expect(awakeable.wait()).resolves.toEqual({ timedOut: false, value: 'from elsewhere' })
      })
    }
  })
}
