import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { freePort, printLogsOnFailure, REPLAY_MODES, startRestateHarness, waitFor } from '../helpers/restate/restate-harness'

interface LedgerEntry { step: string; resumed?: boolean; awakeableId?: string; token?: string; pid: number }

/** The ledger's entries so far (none before the service wrote its first line). */
function readLedger(ledger: string): LedgerEntry[] {
  return existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').map(line => JSON.parse(line) as LedgerEntry) : []
}

function startService(port: number, ledger: string, marker: string): ChildProcess {
  const script = path.resolve('test/helpers/restate/crash-service.ts')
  // One process (no tsx wrapper), so the SIGKILL the step sends itself is what the test observes.
  return spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, PORT: String(port), LEDGER: ledger, MARKER: marker },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

async function listening(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => { if (chunk.toString().includes('listening')) resolve() })
    child.once('exit', code => reject(new Error(`service exited early (${code})`)))
  })
}

/** Starts the probe service, sends `target`, waits for the service to SIGKILL itself, starts a second one on the port. */
async function crashOnceThenRestart(h: RestateHarness, children: ChildProcess[], port: number, ledger: string, marker: string, target: string): Promise<{ first: ChildProcess; invocationId: string }> {
  const first = startService(port, ledger, marker)
  children.push(first)
  await listening(first)
  await h.registerDeployment(`http://127.0.0.1:${port}`)
  const exited = new Promise<NodeJS.Signals | null>(resolve => first.once('exit', (_code, signal) => resolve(signal)))
  const invocationId = await h.send(target)
  expect(await exited).toBe('SIGKILL')
  const second = startService(port, ledger, marker)
  children.push(second)
  await listening(second)
  return { first, invocationId }
}

describe.each(REPLAY_MODES)('crash inside a step ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const dir = mkdtempSync(path.join(tmpdir(), 'zidane-crash-'))
  const children: ChildProcess[] = []
  beforeAll(async () => { harness = await startRestateHarness({ alwaysReplay }) })
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await harness?.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  printLogsOnFailure(() => harness)

  it('re-runs the cut-off step with resumed: true and every other step with resumed: false', async () => {
    const h = harness as RestateHarness
    const port = await freePort()
    const ledger = path.join(dir, 'ledger.jsonl')
    const marker = path.join(dir, 'marker')
    const { first, invocationId } = await crashOnceThenRestart(h, children, port, ledger, marker, 'CrashProbe/k1/run')
    expect(existsSync(marker)).toBe(true)
    const result = await h.attach<string[]>(invocationId)
    expect(result.status).toBe(200)
    expect(result.body).toEqual(['a:false', 'b:true', 'c:false'])
    const entries = readLedger(ledger)
    expect(entries.map(entry => `${entry.step}:${entry.resumed}:${entry.pid === first.pid ? 1 : 2}`)).toEqual(['a:false:1', 'b:false:1', 'b:true:2', 'c:false:2'])
    await waitFor(async () => (await h.query(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.status === 'completed', 10_000, 'completed')
  })

  it('reports an at-most-once step killed the instant it started as resumed on the retry, on another process', async () => {
    const h = harness as RestateHarness
    const port = await freePort()
    const ledger = path.join(dir, 'once.jsonl')
    const marker = path.join(dir, 'once-marker')
    const { first, invocationId } = await crashOnceThenRestart(h, children, port, ledger, marker, 'OnceProbe/k4/run')
    const result = await h.attach<string>(invocationId)
    expect(result.body).toBe('once:true')
    expect(readLedger(ledger).map(entry => `${entry.step}:${entry.resumed}:${entry.pid === first.pid ? 1 : 2}`)).toEqual(['once:false:1', 'once:true:2'])
  })

  it('keeps an answer given to an awakeable tool while the service process is down', async () => {
    const h = harness as RestateHarness
    const port = await freePort()
    const ledger = path.join(dir, 'ask.jsonl')
    const first = startService(port, ledger, path.join(dir, 'unused'))
    children.push(first)
    await listening(first)
    await h.registerDeployment(`http://127.0.0.1:${port}`)
    const invocationId = await h.send('AskProbe/k2/ask')
    const notified = await waitFor(() => readLedger(ledger).find(entry => entry.step === 'notify'), 20_000, 'notify')
    await waitFor(async () => (await h.query(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.status === (alwaysReplay ? 'suspended' : 'running'), 20_000, 'parked')
    const exited = new Promise(resolve => first.once('exit', resolve))
    first.kill('SIGKILL')
    await exited
    expect(await h.resolveAwakeable(notified.awakeableId as string, 'yes, go')).toBe(202)
    await new Promise(resolve => setTimeout(resolve, 300))
    const second = startService(port, ledger, path.join(dir, 'unused'))
    children.push(second)
    await listening(second)
    const result = await h.attach<{ content: string }>(invocationId)
    expect(result.body).toEqual({ content: 'yes, go' })
    expect(readLedger(ledger).filter(entry => entry.step === 'notify')).toHaveLength(1)
  })

  it('re-attaches a durableStart job after a crash instead of starting it again', async () => {
    const h = harness as RestateHarness
    const port = await freePort()
    const ledger = path.join(dir, 'job.jsonl')
    const first = startService(port, ledger, path.join(dir, 'unused'))
    children.push(first)
    await listening(first)
    await h.registerDeployment(`http://127.0.0.1:${port}`)
    const invocationId = await h.send('JobProbe/k3/run')
    const registered = await waitFor(() => readLedger(ledger).find(entry => entry.step === 'register'), 20_000, 'register')
    const exited = new Promise(resolve => first.once('exit', resolve))
    first.kill('SIGKILL')
    await exited
    const second = startService(port, ledger, path.join(dir, 'unused'))
    children.push(second)
    await listening(second)
    expect(await h.resolveAwakeable(registered.awakeableId as string, 'exit 0')).toBe(202)
    const result = await h.attach<string | { content: string }>(invocationId)
    const content = typeof result.body === 'string' ? result.body : result.body.content
    expect(content).toBe('job-k3 ended: exit 0')
    const entries = readLedger(ledger)
    expect(entries.filter(entry => entry.step === 'start')).toHaveLength(1)
    // register is at-least-once up to journal persistence: a kill between its closure and the journaled completion
    // runs it again, for the same job and the same awakeable; the job itself is never started again.
    const registrations = entries.filter(entry => entry.step === 'register')
    expect(registrations.length).toBeGreaterThanOrEqual(1)
    for (const registration of registrations) expect(registration).toMatchObject({ token: 'job-k3', awakeableId: registered.awakeableId })
  })
})
