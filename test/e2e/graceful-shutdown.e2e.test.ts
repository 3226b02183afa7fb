import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, shareWithServices, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface Block { type: string; content?: unknown }
interface View { status: string; turns: Array<{ role: string; content: Block[] }>; runs: Array<{ status: string; text?: string }> }

const GRACE_MS = 20_000

/** Polls `probe` (every 50 ms) until it yields a value; the harness's poller with this file's timeout. */
function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 40_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

/** True while `pid` is a live process (a zombie waiting to be reaped is dead). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z'
  } catch {
    return false
  }
}

function toolResults(view: View): string[] {
  return view.turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result').map(block => JSON.stringify(block.content)))
}

describe('deploys of the services process', () => {
  let stack: TestStack | undefined
  let folder = ''
  const leftovers: number[] = []
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'zidane-drain-'))
    await shareWithServices(folder)
    // One tenant and no sandbox: these tests follow the host process groups of unsandboxed commands (pids, orphans).
    stack = await startTestStack({ ZIDANE_SHUTDOWN_GRACE_MS: String(GRACE_MS), ZIDANE_SANDBOX: 'off' }, { tenants: 1 })
  }, 120_000)
  afterAll(async () => {
    for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    await stack?.destroy()
    await rm(folder, { recursive: true, force: true })
  })

  const prompt = async (sessionId: string, text: string): Promise<void> => {
    const response = await s().request(`/v1/sessions/${sessionId}/prompts`, { method: 'POST', body: JSON.stringify({ prompt: text }) })
    expect(response.status).toBe(202)
  }
  const finished = (sessionId: string): Promise<View> => waitFor(async () => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    if (response.status !== 200) return undefined
    const view = (await response.json()) as View
    return view.status === 'completed' ? view : undefined
  })
  const linesContaining = (text: string): number => s().output().split('\n').filter(line => line.includes(text)).length

  it('SIGTERM during a shell call: the call finishes with its output, the process exits by itself, the run completes after the restart', async () => {
    const ledger = join(folder, 'ledger')
    const services = s().services().current()
    if (!services) throw new Error('no services process')
    const exited = new Promise<{ code: number | null; signal: string | null }>(resolve => services.once('exit', (code, signal) => resolve({ code, signal })))
    await prompt('drain-shell', `shell: echo start >> ${ledger}; sleep 3; echo done >> ${ledger}; echo finished-for-real`)
    await waitFor(() => (existsSync(ledger) ? true : undefined))
    services.kill('SIGTERM')
    expect(await exited).toEqual({ code: 0, signal: null })
    const view = await finished('drain-shell')
    const results = toolResults(view)
    expect(results).toHaveLength(1)
    expect(results[0]).toContain('finished-for-real')
    expect(results[0]).not.toContain(INTERRUPTED_TOOL_TEXT.slice(0, 25))
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toEqual(['start', 'done'])
    // It exited by itself once the step was done, not when the grace ran out.
    expect(linesContaining('draining (running steps: 1,')).toBe(1)
    expect(linesContaining('drained in')).toBe(1)
    expect(linesContaining('grace of')).toBe(0)
  })

  it('SIGKILL during a shell call: the restarted process kills the commands the dead one left, before it takes work', async () => {
    const leaderFile = join(folder, 'leader.pid')
    const jobFile = join(folder, 'job.pid')
    await prompt('orphan-shell', `shell: sleep 1000 & echo $! > ${jobFile}; echo $$ > ${leaderFile}; wait`)
    const pids = await waitFor(() => (existsSync(leaderFile) && existsSync(jobFile) ? [leaderFile, jobFile].map(file => Number(readFileSync(file, 'utf8'))) : undefined))
    leftovers.push(...pids)
    expect(pids.every(isAlive)).toBe(true)
    const listening = linesContaining('zidane services listening')
    s().services().current()?.kill('SIGKILL')
    await waitFor(() => (linesContaining('zidane services listening') > listening ? true : undefined))
    await waitFor(() => (pids.some(isAlive) ? undefined : true), 2_000)
    expect(linesContaining('stopped 1 commands an earlier process left running')).toBe(1)
    const view = await finished('orphan-shell')
    expect(toolResults(view)).toEqual([JSON.stringify(INTERRUPTED_TOOL_TEXT)])
  })
})
