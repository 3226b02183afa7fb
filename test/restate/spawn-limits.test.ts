import { describe, expect, it } from 'vitest'
import type { SessionTurn } from '../../src/session/types'
import type { ToolContext } from '../../src/tools/tool'
import { spawnAllowance } from '../../src/restate/spawn-limits'

/** A tool context whose session holds `turns`, seen from spawn call `callId` of run `r1`. */
function context(callId: string, turns: SessionTurn[]): ToolContext {
  return { callId, runId: 'r1', toolName: 'spawn', session: { turns } } as unknown as ToolContext
}

/** The run's assistant turn `n` (cost `costUsd`) with one spawn call per id. */
function assistant(n: number, costUsd: number, spawnIds: string[]): SessionTurn {
  return { id: `r1-t${n}-a`, runId: 'r1', role: 'assistant', createdAt: n, costUsd, content: spawnIds.map(id => ({ type: 'tool_use', id, name: 'spawn', input: { task: id } })) }
}

describe('spawnAllowance', () => {
  it("gives each child of a fan-out an even share of what remains of the run's budget", () => {
    const turns = [assistant(1, 0.1, []), assistant(2, 0.3, ['a', 'b', 'c'])]
    const allowance = spawnAllowance({ maxCostUsd: 1 }, context('b', turns), { costUsd: 0, children: 0 })
    expect(allowance).toEqual({ maxCostUsd: expect.closeTo(0.2, 10) })
  })

  it("subtracts what earlier children cost; the shares of a turn never add up past the run's budget", () => {
    const turns = [assistant(1, 0.2, ['a']), assistant(2, 0.2, ['b', 'c'])]
    const shares = ['b', 'c'].map(id => spawnAllowance({ maxCostUsd: 1 }, context(id, turns), { costUsd: 0.5, children: 1 }))
    const total = shares.reduce((sum, share) => sum + ('maxCostUsd' in share ? share.maxCostUsd ?? 0 : 0), 0)
    expect(0.4 + 0.5 + total).toBeLessThanOrEqual(1 + 1e-9)
    expect(shares[0]).toEqual({ maxCostUsd: expect.closeTo(0.05, 10) })
  })

  it('refuses a child when the budget is spent', () => {
    const turns = [assistant(1, 0.6, ['a'])]
    expect(spawnAllowance({ maxCostUsd: 1 }, context('a', turns), { costUsd: 0.4, children: 0 })).toEqual({ refusal: 'the cost budget of $1 is spent' })
  })

  it('refuses spawn calls past the per-turn limit', () => {
    const turns = [assistant(1, 0, ['a', 'b', 'c'])]
    expect(spawnAllowance({ maxChildrenPerTurn: 2 }, context('b', turns), { costUsd: 0, children: 0 })).toEqual({})
    expect(spawnAllowance({ maxChildrenPerTurn: 2 }, context('c', turns), { costUsd: 0, children: 0 })).toEqual({ refusal: 'at most 2 sub-agents may start in one turn' })
  })

  it('refuses spawn calls past the run-tree limit and hands each child a share of the rest for its subtree', () => {
    const turns = [assistant(1, 0, ['a', 'b'])]
    expect(spawnAllowance({ maxChildrenPerTree: 10 }, context('a', turns), { costUsd: 0, children: 0 })).toEqual({ maxChildrenPerTree: 4 })
    expect(spawnAllowance({ maxChildrenPerTree: 4 }, context('a', turns), { costUsd: 0, children: 3 })).toEqual({ maxChildrenPerTree: 0 })
    expect(spawnAllowance({ maxChildrenPerTree: 4 }, context('b', turns), { costUsd: 0, children: 3 })).toEqual({ refusal: 'the run tree may start at most 4 sub-agents' })
    expect(spawnAllowance({ maxChildrenPerTree: 0 }, context('a', turns), { costUsd: 0, children: 0 })).toEqual({ refusal: 'the run tree may start at most 0 sub-agents' })
  })

  it('puts no limit on a run that has none', () => {
    expect(spawnAllowance({}, context('a', [assistant(1, 5, ['a'])]), { costUsd: 100, children: 100 })).toEqual({})
  })
})
