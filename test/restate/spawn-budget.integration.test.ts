import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../src/agent/create-agent'
import type { AgentStats } from '../../src/agent/types'
import type { ModelRequest } from '../../src/providers/provider'
import { createSession } from '../../src/session/session'
import type { SessionRun } from '../../src/session/types'
import { scriptedProvider } from '../../src/testing/index'
import type { ToolDef } from '../../src/tools/tool'
import type { ChildRunRequest, ChildRunResult, SpawnLimits } from '../../src/restate/index'
import { restateRuntime, restateSpawnTool } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

const BUDGET_USD = 1
const REQUEST_COST_USD = 0.1

const noop: ToolDef = { spec: { name: 'noop', description: 'Does nothing.', inputSchema: { type: 'object', properties: {} } }, replay: 'safe', execute: async () => 'ok' }

/** A child model that never finishes on its own: every request costs 0.1 and calls `noop` again. */
const childModel = scriptedProvider(() => ({ toolCalls: [{ name: 'noop', input: {} }], costUsd: REQUEST_COST_USD }))

function hasToolResults(request: ModelRequest): boolean {
  return request.messages.some(message => Array.isArray(message.content) && message.content.some(block => block.type === 'tool_result'))
}

/** The parent model: three spawns in one turn (0.1), then a summary. */
const parentModel = scriptedProvider(request => (hasToolResults(request)
  ? { text: 'summary', costUsd: REQUEST_COST_USD }
  : { toolCalls: ['a', 'b', 'c'].map(task => ({ name: 'spawn', input: { task } })), costUsd: REQUEST_COST_USD }))

const budgetChild = restate.service({
  name: 'BudgetChild',
  handlers: {
    run: async (ctx: restate.Context, request: ChildRunRequest): Promise<ChildRunResult> => {
      const startedAt = await ctx.date.now()
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.request().id })
      const session = await createSession({ id: `child:${request.label}`, clock: { now: () => startedAt } })
      const behavior = { maxTurns: 15, ...(request.maxCostUsd === undefined ? {} : { maxCostUsd: request.maxCostUsd }) }
      const agent = createAgent({ provider: childModel, tools: [noop], durable, session, depth: request.depth, behavior })
      const stats = await agent.run({ prompt: request.task })
      return { text: stats.text, status: stats.status === 'limit' ? 'limit' : 'completed', stats, turns: [...session.turns] }
    },
  },
})

const budgetParent = restate.object({
  name: 'BudgetParent',
  handlers: {
    run: async (ctx: restate.ObjectContext, extra: Omit<SpawnLimits, 'maxCostUsd'> | null): Promise<{ stats: AgentStats; runs: SessionRun[]; results: string[] }> => {
      const startedAt = await ctx.date.now()
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const session = await createSession({ id: ctx.key, clock: { now: () => startedAt } })
      const spawn = restateSpawnTool({ dispatch: request => ctx.serviceClient(budgetChild).run(request), limits: { maxCostUsd: BUDGET_USD, ...extra } })
      const agent = createAgent({ provider: parentModel, tools: [spawn], durable, session, behavior: { maxCostUsd: BUDGET_USD } })
      const stats = await agent.run({ prompt: 'fan out' })
      const results = session.turns.flatMap(turn => turn.content.flatMap(block => (block.type === 'tool_result' ? [String(block.content)] : [])))
      return { stats, runs: [...session.runs], results }
    },
  },
})

describe.each(REPLAY_MODES)('cost budgets reach sub-agents on a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => harness as RestateHarness
  beforeAll(async () => { harness = await startRestateHarness({ services: [budgetChild, budgetParent], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it("runs each child under its share of what remains; a child at its share stops with status limit, and the tree's total stays within the budget", async () => {
    const response = await h().call<{ stats: AgentStats; runs: SessionRun[] }>(`BudgetParent/b-${alwaysReplay}/run`, {})
    expect(response.status).toBe(200)
    const children = response.body.runs.filter(run => run.label !== undefined)
    expect(children.map(run => run.status)).toEqual(['limit', 'limit', 'limit'])
    // Each child's share is (1 - 0.1 spent by the parent) / 3 = 0.3; it stops before the request that would pass it.
    for (const child of children) {
      expect(child.totals?.costUsd).toBeGreaterThan(0)
      expect(child.totals?.costUsd).toBeLessThanOrEqual(0.3 + 1e-9)
    }
    expect(response.body.stats.costUsd).toBeLessThanOrEqual(BUDGET_USD + 1e-9)
  })

  it('refuses the spawn calls of a turn past ZIDANE_MAX_CHILDREN_PER_TURN with an error result; the others split the budget', async () => {
    const response = await h().call<{ stats: AgentStats; runs: SessionRun[]; results: string[] }>(`BudgetParent/t-${alwaysReplay}/run`, { maxChildrenPerTurn: 2 })
    expect(response.status).toBe(200)
    expect(response.body.runs.filter(run => run.label !== undefined).map(run => run.status)).toEqual(['limit', 'limit'])
    expect(response.body.results.filter(text => text.startsWith('Sub-agent not started'))).toEqual(['Sub-agent not started: at most 2 sub-agents may start in one turn.'])
    expect(response.body.stats.costUsd).toBeLessThanOrEqual(BUDGET_USD + 1e-9)
  })
})
