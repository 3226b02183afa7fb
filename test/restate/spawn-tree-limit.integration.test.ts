import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../src/agent/create-agent'
import type { AgentStats } from '../../src/agent/types'
import type { ModelRequest } from '../../src/providers/provider'
import { createSession } from '../../src/session/session'
import type { SessionRun } from '../../src/session/types'
import { scriptedProvider } from '../../src/testing/index'
import type { ChildRunRequest, ChildRunResult, MergedChild } from '../../src/restate/index'
import { restateRuntime, restateSpawnTool } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

/** The tree limit of the top-level run, as `ZIDANE_MAX_CHILDREN_PER_RUN` sets it in the services. */
const TREE_LIMIT = 6

/** How many assistant turns the run has had: a model's position in its script. */
function assistantTurns(request: ModelRequest): number {
  return request.messages.filter(message => message.role === 'assistant').length
}

/** The top-level model: three spawns in one turn, one more spawn in the next, then a summary. */
const parentModel = scriptedProvider(request => [
  { toolCalls: ['a', 'b', 'c'].map(task => ({ name: 'spawn', input: { task } })) },
  { toolCalls: [{ name: 'spawn', input: { task: 'd' } }] },
  { text: 'summary' },
][Math.min(assistantTurns(request), 2)] ?? { text: 'summary' })

/** A child asks for two grandchildren in one turn, then answers; a grandchild answers at once. */
const childModel = scriptedProvider(request => (assistantTurns(request) === 0 ? { toolCalls: ['x', 'y'].map(task => ({ name: 'spawn', input: { task } })) } : { text: 'child done' }))
const grandchildModel = scriptedProvider(() => ({ text: 'leaf' }))

/** The tool results of a session's turns, in order, with the run each belongs to. */
function toolResults(turns: readonly { runId: string; content: readonly { type: string; content?: unknown }[] }[]): { runId: string; text: string }[] {
  return turns.flatMap(turn => turn.content.flatMap(block => (block.type === 'tool_result' ? [{ runId: turn.runId, text: String(block.content) }] : [])))
}

/** The refusals among `results`. */
function refusals(results: readonly { text: string }[]): string[] {
  return results.map(result => result.text).filter(text => text.startsWith('Sub-agent not started'))
}

/** A child invocation: as the services' child runner, its own spawns share the tree allowance its parent handed it. */
const treeChild = restate.service({
  name: 'TreeChild',
  handlers: {
    run: async (ctx: restate.Context, request: ChildRunRequest): Promise<ChildRunResult> => {
      const startedAt = await ctx.date.now()
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.request().id })
      const session = await createSession({ id: `child:${request.label}`, clock: { now: () => startedAt } })
      const merged: MergedChild[] = []
      const limits = request.maxChildrenPerTree === undefined ? {} : { maxChildrenPerTree: request.maxChildrenPerTree }
      const spawn = restateSpawnTool({ dispatch: child => ctx.serviceClient(treeChild).run(child), persist: false, onChildMerged: child => { merged.push(child) }, limits })
      const agent = createAgent({ provider: request.depth === 1 ? childModel : grandchildModel, tools: [spawn], durable, session, depth: request.depth })
      const stats = await agent.run({ prompt: request.task })
      return { text: stats.text, status: 'completed', stats, turns: [...session.turns], children: merged }
    },
  },
})

const treeParent = restate.object({
  name: 'TreeParent',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<{ stats: AgentStats; runs: SessionRun[]; results: { runId: string; text: string }[] }> => {
      const startedAt = await ctx.date.now()
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const session = await createSession({ id: ctx.key, clock: { now: () => startedAt } })
      const spawn = restateSpawnTool({ dispatch: request => ctx.serviceClient(treeChild).run(request), limits: { maxChildrenPerTree: TREE_LIMIT } })
      const agent = createAgent({ provider: parentModel, tools: [spawn], durable, session })
      const stats = await agent.run({ prompt: 'fan out twice' })
      return { stats, runs: [...session.runs], results: toolResults(session.turns) }
    },
  },
})

describe.each(REPLAY_MODES)('the children limit of a run tree on a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => harness as RestateHarness
  beforeAll(async () => { harness = await startRestateHarness({ services: [treeChild, treeParent], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('splits what the tree may start among a fan-out, refuses grandchildren past each share and the top-level spawn once the tree is full', async () => {
    const response = await h().call<{ stats: AgentStats; runs: SessionRun[]; results: { runId: string; text: string }[] }>(`TreeParent/tree-${alwaysReplay}/run`, null)
    expect(response.status).toBe(200)
    const descendants = response.body.runs.filter(run => run.label !== undefined)
    // 3 children, each allowed floor((6 - 3) / 3) = 1 grandchild of its 2: the tree holds exactly 6 sub-agents.
    expect(descendants.filter(run => run.depth === 1)).toHaveLength(3)
    expect(descendants.filter(run => run.depth === 2)).toHaveLength(3)
    expect(descendants.length).toBeLessThanOrEqual(TREE_LIMIT)
    // Each child's second spawn was refused inside the child, whose model got the refusal as the call's result.
    for (const child of descendants.filter(run => run.depth === 1)) {
      expect(refusals(response.body.results.filter(result => result.runId === child.id))).toEqual(['Sub-agent not started: the run tree may start at most 1 sub-agents.'])
    }
    // The parent's later spawn finds the tree full (its children's grandchildren counted) and is refused.
    expect(refusals(response.body.results.filter(result => result.runId === response.body.stats.runId))).toEqual([`Sub-agent not started: the run tree may start at most ${TREE_LIMIT} sub-agents.`])
    expect(refusals(response.body.results)).toHaveLength(4)
    expect(response.body.stats.status).toBe('completed')
  })
})
