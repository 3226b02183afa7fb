import { readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { bubblewrapSandbox, isSandboxUsable } from '../../../src/tools/builtin/command-sandbox'
import { findCgroupRoots } from '../../../src/tools/builtin/cgroup-roots'
import { shellTool } from '../../../src/tools/builtin/shell-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { startFakeUpstream } from './fake-upstream'
import type { FakeUpstream } from './fake-upstream'
import { processesWith } from './sandbox-attacks'
import { runTool, textOf, useSandbox } from './tool-context'


describe('shell in the bubblewrap sandbox', () => {
  const folders = useSandbox()
  const sandbox = bubblewrapSandbox({ memoryMb: 1024, cpuSeconds: 30, maxProcesses: 500 })
  let shell: ToolDef
  let server: Server
  let port = 0

  beforeAll(async () => {
    server = createServer(socket => socket.end('secret service\n'))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(async () => { await new Promise(resolve => server.close(resolve)) })
  beforeEach(() => { shell = shellTool(createWorkspace(folders.root), { sandbox, timeoutMs: 20_000 }) })

  it('is usable on this machine (CI installs bubblewrap)', () => {
    expect(isSandboxUsable(sandbox, folders.root)).toBe(true)
    expect(isSandboxUsable(bubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' }), folders.root)).toBe(false)
  })

  it('reads and writes the workspace, which is HOME and the working folder', async () => {
    const result = await runTool(shell, { command: 'echo hi > made.txt && cat made.txt && pwd && echo "$HOME"' })
    expect(textOf(result.content)).toContain(`hi\n${folders.root}\n${folders.root}`)
    expect(await readFile(path.join(folders.root, 'made.txt'), 'utf8')).toBe('hi\n')
  })

  it('sees nothing of the host files outside the workspace and system folders', async () => {
    await writeFile(path.join(folders.outside, 'secret.txt'), 'top secret')
    const result = await runTool(shell, { command: `cat ${folders.outside}/secret.txt; ls /etc/shadow; ls /proc/1/root/; cat /proc/${process.pid}/environ` })
    expect(result.isError).toBe(true)
    expect(textOf(result.content)).not.toContain('top secret')
    expect(textOf(result.content)).toContain('No such file or directory')
  })

  it('gets a minimal environment, never the host process variables', async () => {
    process.env.ZIDANE_TEST_FAKE_API_KEY = 'sk-should-not-leak'
    try {
      const result = await runTool(shell, { command: 'env' })
      expect(textOf(result.content)).not.toContain('sk-should-not-leak')
      expect(textOf(result.content)).toContain(`HOME=${folders.root}`)
    } finally {
      delete process.env.ZIDANE_TEST_FAKE_API_KEY
    }
  })

  it('cannot reach a service on the host loopback, nor any network', async () => {
    const result = await runTool(shell, { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3` })
    expect(result.isError).toBe(true)
    expect(textOf(result.content)).not.toContain('secret service')
  })

  it('runs under memory, CPU time and process limits it cannot raise', async () => {
    const result = await runTool(shell, { command: 'ulimit -v; ulimit -t; ulimit -u; ulimit -v unlimited' })
    expect(textOf(result.content)).toContain(`${1024 * 1024}\n30\n500`)
    expect(result.isError).toBe(true)
  })

  it('leaves no process behind when the call times out', async () => {
    const marker = `${Date.now()}${Math.floor(Math.random() * 1000)}`
    const result = await runTool(shell, { command: `sleep 1${marker} & sleep 2${marker}`, timeoutMs: 500 })
    expect(textOf(result.content)).toContain('timed out')
    await vi.waitFor(async () => { expect(await processesWith(marker)).toEqual([]) }, { timeout: 10_000, interval: 50 })
  })

  /** Runs `command` in `tool` while counting, every 20 ms, the host processes whose command line holds `marker`: the peak. */
  async function runCountingProcesses(tool: ToolDef, command: string, marker: string, timeoutMs: number): Promise<{ text: string; peak: number; elapsedMs: number }> {
    let peak = 0
    let sampling: Promise<void> | undefined
    const sample = async (): Promise<void> => { peak = Math.max(peak, (await processesWith(marker)).length) }
    const sampler = setInterval(() => { sampling ??= sample().finally(() => { sampling = undefined }) }, 20)
    const startedAt = Date.now()
    const result = await runTool(tool, { command, timeoutMs }).finally(() => clearInterval(sampler))
    const elapsedMs = Date.now() - startedAt
    await sampling
    console.info(`${marker}: peak ${peak} processes, call returned after ${elapsedMs} ms`)
    return { text: textOf(result.content), peak, elapsedMs }
  }

  it('limits the processes of one command, for root too: forks past the limit fail', async () => {
    expect(findCgroupRoots().some(root => root.controllers.includes('pids'))).toBe(true)
    expect(bubblewrapSandbox({ maxProcesses: 40 }).details).toMatch(/^process cap 40 \(cgroup pids.max\); per tenant/)
    expect(bubblewrapSandbox({ maxProcesses: 40, cgroupRoots: false }).details).toMatch(/^process cap 40 \(ulimit -u, not binding root\); no tenant limits/)
    const limited = shellTool(createWorkspace(folders.root), { sandbox: bubblewrapSandbox({ maxProcesses: 40 }), timeoutMs: 20_000, killGraceMs: 500 })
    const marker = `7${Date.now() % 100_000}`
    // Under a loaded machine starting 40 processes takes seconds: the timeout leaves room for the loop to reach the cap.
    const { text, peak } = await runCountingProcesses(limited, `for i in $(seq 1 100); do sleep ${marker} & done; wait`, marker, 10_000)
    expect(text).toContain('fork: retry: Resource temporarily unavailable')
    expect(peak).toBeGreaterThan(20)
    expect(peak).toBeLessThanOrEqual(40)
    await vi.waitFor(async () => { expect(await processesWith(marker)).toEqual([]) }, { timeout: 10_000, interval: 50 })
  })

  it('contains a fork bomb: it stays under the limit, the call returns at its timeout and leaves no process behind', async () => {
    const limited = shellTool(createWorkspace(folders.root), { sandbox: bubblewrapSandbox({ maxProcesses: 64 }), timeoutMs: 20_000, killGraceMs: 500 })
    const marker = `bomb${Date.now()}`
    const { text, peak, elapsedMs } = await runCountingProcesses(limited, `: ${marker}; bomb() { bomb | bomb & }; bomb; sleep 30`, marker, 5000)
    expect(text).toContain('timed out after 5000 ms')
    expect(text).toContain('fork: retry: Resource temporarily unavailable')
    expect(peak).toBeLessThanOrEqual(64)
    expect(elapsedMs).toBeLessThan(12_000)
    await vi.waitFor(async () => { expect(await processesWith(marker)).toEqual([]) }, { timeout: 10_000, interval: 50 })
  })
})

describe('outbound network of sandboxed commands', () => {
  const folders = useSandbox()
  let upstream: FakeUpstream
  const resolveHost = async (host: string): Promise<string[]> => (host === 'api.allowed.test' || host === 'other.test' ? [upstream.address] : [])

  beforeAll(async () => { upstream = await startFakeUpstream() })
  afterAll(async () => { await upstream.close() })
  beforeEach(() => { upstream.requests.length = 0 })

  it('is off without allowed domains: curl, node http and node fetch reach no host, by name or address', async () => {
    // Node's fetch (WebAssembly) reserves more address space than the default 2 GiB cap: give it room, so it fails on the network.
    const shell = shellTool(createWorkspace(folders.root), { sandbox: bubblewrapSandbox({ memoryMb: 65_536 }), timeoutMs: 20_000 })
    const direct = `http://${upstream.address}:${upstream.port}/direct`
    const node = `node -e 'require("http").get("${direct}", () => console.log("node reached")).on("error", error => console.log("node http failed", error.code))'; node -e 'fetch("${direct}").then(() => console.log("fetch reached"), error => console.log("node fetch failed", error.cause?.code))'`
    const result = await runTool(shell, { command: `curl -sS -m 5 ${direct}; echo "curl exit $?"; curl -sS -m 5 http://api.allowed.test:${upstream.port}/; echo "curl exit $?"; ${node}` })
    const text = textOf(result.content)
    expect(text).toMatch(/curl exit [1-9]/)
    expect(text).not.toContain('curl exit 0')
    expect(text).toMatch(/node http failed E[A-Z]+/)
    expect(text).toMatch(/node fetch failed E[A-Z]+/)
    expect(upstream.requests).toEqual([])
  })

  it('with allowed domains, reaches a listed name through the proxy; other names, addresses and direct connections fail', async () => {
    const sandbox = bubblewrapSandbox({ allowDomains: ['api.allowed.test'], resolveHost })
    const shell = shellTool(createWorkspace(folders.root), { sandbox, timeoutMs: 20_000 })
    const port = upstream.port
    const allowed = await runTool(shell, { command: `curl -sS -p http://api.allowed.test:${port}/tunnel && curl -sS http://api.allowed.test:${port}/plain` })
    expect(textOf(allowed.content)).toContain('upstream /tunnel\nupstream /plain')
    const refused = await runTool(shell, { command: `curl -sS -p http://other.test:${port}/a; curl -sS -f http://other.test:${port}/b; curl -sS -p http://${upstream.address}:${port}/c; curl -sS --noproxy '*' -m 5 http://${upstream.address}:${port}/d; true` })
    const text = textOf(refused.content)
    expect(text).toContain('CONNECT tunnel failed, response 403')
    expect(text).toContain('The requested URL returned error: 403')
    expect(text).toMatch(/Failed to connect to|Couldn't connect/)
    expect(upstream.requests).toEqual(['GET /tunnel', 'GET /plain'])
  })
})
