import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { createHooks } from 'hookable'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentHooks, AgentStats } from '../../src/agent/types'
import { createSession, loadSession } from '../../src/session/session'
import type { SessionRun, SessionTurn } from '../../src/session/types'
import type { ToolResult } from '../../src/tools/tool'
import type { ChildRunRequest, ChildRunResult, InFlightChild, MergedChild } from '../../src/restate/index'
import { restateRuntime, restateSpawnTool } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import { toolContext } from '../helpers/restate/tool-context'

const aborted: Array<{ key: string; inFlight: readonly InFlightChild[] }> = []

function stats(runId: string, text: string): AgentStats {
  return { runId, sessionId: runId, status: 'completed', suspended: false, turns: 1, toolCalls: 0, modelRequests: 1, usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.01, wallMs: 1, startedAt: 0, endedAt: 0, text }
}

/** Runs `tasks` through a spawn tool the way the loop does: start together, join, then `tool-results:after`. */
async function fanOut(ctx: restate.Context, tasks: string[], depth: number, session: Awaited<ReturnType<typeof createSession>> | undefined, onChildMerged?: (merged: MergedChild) => void, key = ''): Promise<ToolResult[]> {
  const runtime = restateRuntime(ctx, { promises: RestatePromise, idSeed: `${key}:${depth}` })
  const hooks = createHooks<AgentHooks>()
  const events: string[] = []
  hooks.hook('child:run:end', event => { events.push(event.label) })
  const spawn = restateSpawnTool({
    dispatch: req => ctx.serviceClient(childRunner).runChild(req),
    ...(onChildMerged ? { onChildMerged } : {}),
    onAbort: inFlight => { aborted.push({ key, inFlight }) },
  })
  const calls = tasks.map((task, index) => ({ id: `call-${depth}-${index}`, task }))
  const promises = calls.map(call => spawn.execute({ task: call.task }, toolContext(runtime, { callId: call.id, depth, hooks, runId: `run-d${depth}`, ...(session ? { session } : {}) })) as Promise<ToolResult>)
  const results = await runtime.all(promises)
  const turnRecord: SessionTurn = { id: `results-${depth}`, runId: `run-d${depth}`, role: 'user', createdAt: 1, content: calls.map((call, index) => ({ type: 'tool_result', toolUseId: call.id, content: String(results[index]?.content) })) }
  await hooks.callHook('tool-results:after', { runId: `run-d${depth}`, turn: 1, turnRecord })
  return results
}

const childRunner = restate.service({
  name: 'ChildRunner',
  handlers: {
    runChild: async (ctx: restate.Context, req: ChildRunRequest): Promise<ChildRunResult> => {
      const startedAt = await ctx.run('start', () => Date.now())
      if (req.task.startsWith('block')) await ctx.sleep(60_000)
      const children: MergedChild[] = []
      if (req.task.startsWith('fanout')) await fanOut(ctx, ['leaf-a', 'leaf-b'], req.depth, undefined, merged => { children.push(merged) })
      else await ctx.run('work', () => new Promise(resolve => setTimeout(resolve, 300)))
      const endedAt = await ctx.run('end', () => Date.now())
      const turns: SessionTurn[] = [
        { id: 'u1', runId: 'child', role: 'user', content: [{ type: 'text', text: req.task }], createdAt: startedAt },
        { id: 'a1', runId: 'child', role: 'assistant', content: [{ type: 'text', text: `done ${req.task}` }], createdAt: endedAt },
      ]
      return { text: `done ${req.task} (${req.label}, depth ${req.depth})`, status: 'completed', stats: stats(req.label, `done ${req.task}`), turns, startedAt, endedAt, ...(children.length > 0 ? { children } : {}) }
    },
  },
})

const spawnParent = restate.object({
  name: 'SpawnParent',
  handlers: {
    run: async (ctx: restate.ObjectContext, tasks: string[]): Promise<{ results: ToolResult[]; runs: SessionRun[]; turnIds: string[] }> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const session = await loadSession(runtime.stores.session, ctx.key) ?? await createSession({ id: ctx.key, store: runtime.stores.session })
      const results = await fanOut(ctx, tasks, 0, session, undefined, ctx.key)
      const stored = await loadSession(runtime.stores.session, ctx.key)
      return { results, runs: [...stored?.runs ?? []], turnIds: (stored?.turns ?? []).map(turn => turn.id) }
    },
  },
})

describe.each(REPLAY_MODES)('restateSpawnTool against a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => harness as RestateHarness
  beforeAll(async () => { harness = await startRestateHarness({ services: [childRunner, spawnParent], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('runs three children in parallel and merges them into the session', async () => {
    const response = await h().call<{ results: ToolResult[]; runs: SessionRun[] }>(`SpawnParent/p3-${alwaysReplay}/run`, ['one', 'two', 'three'])
    expect(response.status).toBe(200)
    expect(response.body.results.map(result => result.content)).toEqual(['done one (child-1, depth 1)', 'done two (child-2, depth 1)', 'done three (child-3, depth 1)'])
    const runs = response.body.runs
    expect(runs.map(run => run.label)).toEqual(['child-1', 'child-2', 'child-3'])
    const lastStart = Math.max(...runs.map(run => run.startedAt))
    const firstEnd = Math.min(...runs.map(run => run.endedAt ?? 0))
    expect(lastStart).toBeLessThan(firstEnd)
    expect(runs.every(run => run.depth === 1 && run.parentCallId?.startsWith('call-0-') && run.totals?.costUsd === 0.01)).toBe(true)
  })

  it('merges a depth-2 fan-out with re-labelled grandchildren and unique turn ids', async () => {
    const response = await h().call<{ runs: SessionRun[]; turnIds: string[] }>(`SpawnParent/p2-${alwaysReplay}/run`, ['fanout-x', 'plain'])
    expect(response.status).toBe(200)
    const runs = response.body.runs
    expect(runs.map(run => `${run.label}@${run.depth}`)).toEqual(['child-1@1', 'child-3@2', 'child-4@2', 'child-2@1'])
    expect(runs.find(run => run.label === 'child-3')?.parentRunId).toBe(runs.find(run => run.label === 'child-1')?.id)
    expect(new Set(response.body.turnIds).size).toBe(response.body.turnIds.length)
    expect(response.body.turnIds).toHaveLength(8)
  })

  it('cancelling the parent cancels its children and runs onAbort once', async () => {
    const key = `pc-${alwaysReplay}`
    const invocationId = await h().send(`SpawnParent/${key}/run`, ['block-1', 'block-2'])
    await h().waitFor(async () => (await h().query(`SELECT id FROM sys_invocation WHERE target_service_name = 'ChildRunner' AND status IN ('suspended', 'running') AND invoked_by_id = '${invocationId}'`)).length === 2, 20_000, 'two running children')
    expect(await h().cancel(invocationId)).toBe(202)
    const result = await h().attach(invocationId)
    expect(result.status).toBe(409)
    const children = await h().waitFor(async () => {
      const rows = await h().query<{ status: string; completion_failure?: string }>(`SELECT status, completion_failure FROM sys_invocation WHERE target_service_name = 'ChildRunner' AND invoked_by_id = '${invocationId}'`)
      return rows.length === 2 && rows.every(row => row.status === 'completed') ? rows : undefined
    }, 20_000, 'children cancelled')
    expect(children.every(row => String(row.completion_failure).includes('Cancelled'))).toBe(true)
    const mine = aborted.filter(entry => entry.key === key)
    expect(mine.length).toBeGreaterThanOrEqual(1)
    expect(mine[0]?.inFlight.map(child => child.label)).toEqual(['child-1', 'child-2'])
  })
})
