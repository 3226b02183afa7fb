import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { replicaSandboxCgroup } from '../../scripts/cluster/start-cluster'
import { findCgroupRoots } from '../../src/tools/builtin/cgroup-roots'
import { startTestCluster } from '../helpers/cluster'
import type { TestCluster } from '../helpers/cluster'

/** Every process below `root` (its children, theirs, …), from `/proc`. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch { /* exited meanwhile */ }
  }
  const below = (pid: number): boolean => { for (let up = parents.get(pid); up !== undefined && up > 1; up = parents.get(up)) if (up === root) return true; return false }
  return [...parents.keys()].filter(below)
}

/** The pids-controller cgroup of `pid` (`/zidane-sandbox/tenant-…/command-…`), undefined when it has exited. */
function pidsCgroup(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find(line => line.split(':')[1]?.split(',').includes('pids'))?.split(':')[2]
  } catch {
    return undefined
  }
}

describe('the cgroup of each services replica of the loopback cluster', () => {
  it('is the configured sandbox cgroup name, or zidane-sandbox, with -services-<n>, within 64 characters', () => {
    expect(replicaSandboxCgroup(undefined, 0)).toBe('zidane-sandbox-services-1')
    expect(replicaSandboxCgroup('stack-b', 1)).toBe('stack-b-services-2')
    expect(replicaSandboxCgroup('bad/name', 0)).toBe('zidane-sandbox-services-1')
    const long = replicaSandboxCgroup('a'.repeat(64), 1)
    expect(long).toHaveLength(64)
    expect(long.endsWith('-services-2')).toBe(true)
  })
})

const pidsRoot = findCgroupRoots().some(root => root.version === 1 && root.controllers.includes('pids'))

// Two replicas on one host that put their file workers in the same tenant cgroup passed its process cap together (512
// by default; each warm worker is 13 tasks): the kernel refused their threads, and tool calls crashed or took 20 s.
describe.skipIf(!pidsRoot)('the file workers of the loopback cluster (3 Restate nodes, 2 services replicas)', { timeout: 240_000 }, () => {
  let cluster: TestCluster | undefined
  beforeAll(async () => { cluster = await startTestCluster({ ANTHROPIC_API_KEY: '' }) }, 240_000)
  afterAll(async () => { await cluster?.destroy() }, 120_000)

  it('run in tenant cgroups of their own replica, so two replicas never share one tenant\'s process cap', async ({ skip }) => {
    const running = cluster as TestCluster
    if (running.shell.mode !== 'sandboxed') skip()
    const sessions = Array.from({ length: 8 }, (_, index) => `cgroups-${index}`)
    const answers = await Promise.all(sessions.map(async id => {
      const response = await running.request(`/v1/sessions/${id}/prompts?wait=true`, { method: 'POST', body: { prompt: `write: notes/${id}.txt ${id}` } })
      return { status: response.status, body: await response.json() as { status?: string; text?: string } }
    }))
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { status: 'completed' } })
    // Warm workers stay idle 30 s after their call: they are all alive here.
    const found = running.config.servicesPorts.map((_port, index) => {
      const pid = running.process(`services-${index + 1}`).current()?.pid ?? 0
      const folders = descendants(pid).map(pidsCgroup).filter((folder): folder is string => folder?.includes('/tenant-') === true)
      return { top: `/${replicaSandboxCgroup(process.env.ZIDANE_SANDBOX_CGROUP, index)}/tenant-`, folders }
    })
    expect(found.flatMap(replica => replica.folders).length).toBeGreaterThan(0)
    for (const replica of found) for (const folder of replica.folders) expect(folder).toContain(replica.top)
  })
})
