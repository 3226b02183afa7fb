import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { journalCensus } from '../../bench/lib/journal'
import { PEER_AGENT } from '../../bench/lib/peer-agent'
import { startBenchServer } from '../../bench/lib/restate-server'
import type { BenchServer } from '../../bench/lib/restate-server'
import type { BenchRunResult } from '../../bench/lib/restate-services'
import { benchServices } from '../../bench/lib/restate-services'

/*
 * The §2 peer (AI SDK 7 + @restatedev/vercel-ai-middleware) on a real Restate server, served with the other bench
 * objects: it makes the scripted run's turns, and journals one model step per turn and one tool step per tool turn,
 * as the census the bench prints reads them.
 */
describe('bench peer: AI SDK + Restate middleware', () => {
  let server: BenchServer
  beforeAll(async () => {
    server = await startBenchServer()
    await server.serve([...benchServices])
  }, 60_000)
  afterAll(async () => { await server?.stop() })

  it('runs the scripted run through the middleware: a journaled model step per turn, a tool step per tool turn', async () => {
    const { body } = await server.call<BenchRunResult>(`${PEER_AGENT}/peer-${process.pid}/run`, { toolTurns: 3, modelDelayMs: 0 })
    expect(body.turns).toBe(4)
    const census = await journalCensus(server, body.invocationId)
    const count = (label: string): number => census.kinds.find(kind => kind.label === label)?.count ?? 0
    expect(count('Command: Run calling zidane-bench')).toBe(4)
    expect(count('Command: Run echo')).toBe(3)
    expect(census.runCommands).toBe(7)
  }, 60_000)
})
