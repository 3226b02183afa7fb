import { readdir, readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/** The host's available memory, in MiB. */
async function availableMemoryMb(): Promise<number> {
  const line = (await readFile('/proc/meminfo', 'utf8')).split('\n').find(entry => entry.startsWith('MemAvailable:')) ?? ''
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024
}

/** Processes on the host now. */
async function hostProcesses(): Promise<number> {
  return (await readdir('/proc')).filter(entry => /^\d+$/.test(entry)).length
}

const TENANT_MEMORY_MB = 256
const TENANT_MAX_PROCESSES = 120
const QUOTA_MB = 20

/**
 * Tenant B runs four hogs at once, one per session (memory, tmpfs, processes, disk), on the real stack with the sandbox
 * on and small tenant limits; the host keeps its memory and pids, B's hogs stop at B's limits and tenant A's run
 * completes meanwhile.
 */
describe('hogs in four sessions of one tenant at once stay within the tenant limits', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => {
    stack = await startTestStack({ ZIDANE_TENANT_MEMORY_MB: String(TENANT_MEMORY_MB), ZIDANE_TENANT_MAX_PROCESSES: String(TENANT_MAX_PROCESSES), ZIDANE_WORKSPACE_QUOTA_MB: String(QUOTA_MB) })
  }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  const run = async (tenant: 0 | 1, session: string, prompt: string): Promise<string> => {
    const response = await s().request(`/v1/sessions/${session}/prompts?wait=true`, { method: 'POST', key: s().apiKeys[tenant], body: JSON.stringify({ prompt }) })
    expect(response.status).toBe(200)
    return ((await response.json()) as { text: string }).text
  }

  it('keeps the host above its floors while the hogs run, and the other tenant completes', async () => {
    const memoryBefore = await availableMemoryMb()
    const samples: Array<{ memoryMb: number; processes: number }> = []
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        samples.push({ memoryMb: await availableMemoryMb(), processes: await hostProcesses() })
        await new Promise(resolve => setTimeout(resolve, 100))
      }
    })()
    const hogs = Promise.all([
      run(1, 'hog-memory', 'shell: python3 -c "b = bytearray(1024 * 1024 * 1024); b[::4096] = b\'x\' * len(b[::4096]); print(\'allocated\')"'),
      run(1, 'hog-tmpfs', 'shell: head -c 1G /dev/zero > /tmp/fill; head -c 1G /dev/zero > /dev/shm/fill; du -sm /tmp/fill /dev/shm/fill'),
      // The loop forks in the background (bash retries a refused fork); after 4 s the sandbox's own /proc says how many run.
      // Counted with shell builtins only: once the hog holds every pid of the tenant, `ls | grep` could not fork.
      run(1, 'hog-pids', 'shell: (for i in $(seq 1 400); do sleep 20 & done) 2>/dev/null & sleep 4; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "processes $n"'),
      run(1, 'hog-disk', 'shell: head -c 200M /dev/zero > big; ls -s --block-size=M big'),
    ])
    const bystander = await run(0, 'hog-bystander', 'write: notes.txt still served\nread: notes.txt')
    const [memory, tmpfs, pids, disk] = await hogs
    // Folders the quota's walk cannot read, or cannot reach (too deep), do not hide what they hold.
    const hidden = await run(1, 'hog-hidden', 'shell: for i in 1 2 3; do mkdir h$i && chmod 300 h$i && head -c 15M /dev/zero > h$i/f; sleep 0.6; done; echo hidden-written')
    expect(await run(1, 'hog-deep', `shell: mkdir -p ${'d/'.repeat(70)} && echo deep`)).toContain('deep')
    const deep = await run(1, 'hog-deep', 'shell: for i in 1 2 3; do head -c 15M /dev/zero > big$i; sleep 0.6; done; echo deep-written')
    expect(hidden).not.toContain('hidden-written')
    expect(hidden).toMatch(/quota/i)
    expect(deep).not.toContain('deep-written')
    expect(deep).toMatch(/quota/i)
    sampling = false
    await sampler
    expect(bystander).toContain('still served')
    // The memory hog is killed (SIGKILL: exit 137), not merely silent (a missing interpreter would be silent too).
    expect(memory).not.toContain('allocated')
    expect(memory).toMatch(/Exit code: 137/)
    // Both fills ran and `du` measured each, well short of the 1 GiB asked.
    const filled = ['/tmp/fill', '/dev/shm/fill'].map(file => Number(new RegExp(`^(\\d+)\\s+${file}$`, 'm').exec(tmpfs)?.[1] ?? Number.NaN))
    for (const mb of filled) expect(mb, tmpfs).toBeLessThan(TENANT_MEMORY_MB)
    const jobs = Number(/processes (\d+)/.exec(pids)?.[1] ?? Number.NaN)
    expect(jobs).toBeLessThanOrEqual(TENANT_MAX_PROCESSES)
    // The fork loop did run up against the limit: a hog that never forked would pass the bound above.
    expect(jobs).toBeGreaterThan(TENANT_MAX_PROCESSES / 2)
    expect(disk).toMatch(/quota/i)
    const lowestMemoryMb = Math.min(...samples.map(sample => sample.memoryMb))
    const mostProcesses = Math.max(...samples.map(sample => sample.processes))
    console.info(`tenant hogs: host memory available ${Math.round(memoryBefore)} MiB before, at least ${Math.round(lowestMemoryMb)} MiB during; at most ${mostProcesses} host processes; B's pid hog ran ${jobs} processes at once`)
    expect(memoryBefore - lowestMemoryMb).toBeLessThan(4 * TENANT_MEMORY_MB + 1024)
    expect(mostProcesses).toBeLessThan(4000)
  }, 120_000)
})
