import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunResult, SessionView } from '../../contract/session'
import { printLogsOnFailure, startRestateHarness } from '../helpers/restate/restate-harness'
import { loadSessionServices } from '../helpers/restate/session-services'
import type { RestateHarness } from '../helpers/restate/restate-harness'

const TREE_LIMIT = 4

describe('ZIDANE_MAX_CHILDREN_PER_RUN through the real services on a real server', () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  const workspaces = mkdtempSync(join(tmpdir(), 'zidane-tree-limit-'))
  beforeAll(async () => {
    // The services read their limits from the environment when they load: load a fresh copy with the tree limit set.
    const services = loadSessionServices({ ZIDANE_MAX_CHILDREN_PER_RUN: String(TREE_LIMIT), ZIDANE_WORKSPACE_ROOT: workspaces })
    harness = await startRestateHarness({ services })
  })
  afterAll(async () => {
    await harness?.stop()
    rmSync(workspaces, { recursive: true, force: true })
  })
  printLogsOnFailure(() => harness)

  it('refuses the spawn calls of a turn past what the tree may start, with an error result', async () => {
    const result = await h().call<SessionRunResult>('session/t1~wide/run', { prompt: 'spawn: a | b | c | d | e' })
    expect(result.status).toBe(200)
    expect(result.body.text).toBe(`Children answered: Echo: a / Echo: b / Echo: c / Echo: d / Sub-agent not started: the run tree may start at most ${TREE_LIMIT} sub-agents.`)
    const view = await h().call<SessionView>('session/t1~wide/get', null)
    expect(view.body.runs.filter(run => run.label !== undefined)).toHaveLength(TREE_LIMIT)
  })

  it('hands each child its share of what is left, so grandchildren past the tree limit are refused inside the children', async () => {
    // Three children take 3 of the 4: each child's own subtree may start floor((4 - 3) / 3) = 0 sub-agents.
    const result = await h().call<SessionRunResult>('session/t1~deep/run', { prompt: 'spawn: spawn: x | spawn: y | spawn: z' })
    expect(result.status).toBe(200)
    const refusal = 'Children answered: Sub-agent not started: the run tree may start at most 0 sub-agents.'
    expect(result.body.text).toBe(`Children answered: ${[refusal, refusal, refusal].join(' / ')}`)
    const view = await h().call<SessionView>('session/t1~deep/get', null)
    const descendants = view.body.runs.filter(run => run.label !== undefined)
    expect(descendants.map(run => run.depth)).toEqual([1, 1, 1])
  })
})
