import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

const root = join(import.meta.dirname, '..', '..', '..')
const fixture = join(import.meta.dirname, 'fixtures', 'crash-agent.ts')

/** How a fixture process ended: its exit code or signal, and the `RESULT` line it printed, if any. */
export interface FixtureOutcome {
  code: number | null
  signal: NodeJS.Signals | null
  result?: { stats: { status: string; reason?: string; resumed?: boolean; text: string; runId: string } | null; error?: string }
  stderr: string
}

/**
 * Starts the crash fixture with `env` (ZDB, ZLEDGER and ZSESSION are required) as one Node process with tsx's loader
 * (not the `tsx` wrapper, which would put a parent process between the test's signals and the agent).
 */
export function startFixture(env: Record<string, string>): { child: ChildProcess; done: Promise<FixtureOutcome> } {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { cwd: root, env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, NODE_NO_WARNINGS: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', chunk => { stdout += String(chunk) })
  child.stderr?.on('data', chunk => { stderr += String(chunk) })
  const done = new Promise<FixtureOutcome>(resolve => {
    child.on('close', (code, signal) => {
      const line = stdout.split('\n').find(candidate => candidate.startsWith('RESULT '))
      const outcome: FixtureOutcome = { code, signal, stderr }
      if (line) outcome.result = JSON.parse(line.slice(7)) as FixtureOutcome['result'] & object
      resolve(outcome)
    })
  })
  return { child, done }
}

/** Runs the fixture to its end. */
export function runFixture(env: Record<string, string>): Promise<FixtureOutcome> {
  return startFixture(env).done
}

/** One line of the ledger the fixture's provider and tools append to. */
export interface LedgerEntry { pid: number; event: string; turn?: number; name?: string; id?: string; resumed?: boolean; results?: Array<{ id: string; content: unknown }> }

/** Reads the append-only ledger. */
export function readLedger(path: string): LedgerEntry[] {
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line) as LedgerEntry)
}

/** Resolves once `predicate` holds for the ledger (polled). */
export async function waitForLedger(path: string, predicate: (entries: LedgerEntry[]) => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate(readLedger(path))) {
    if (Date.now() > deadline) throw new Error(`ledger condition not met: ${JSON.stringify(readLedger(path))}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/**
 * Stops `child` (SIGSTOP) at a moment it holds no write transaction on the sessions file `dbPath`. A process stopped
 * inside one (its lease heartbeat writes every few ms) keeps SQLite's write lock, so every other process waits its busy
 * timeout and fails: SQLite's locking, not the takeover a test wants to see. Tries again after a short resume.
 */
export async function stopOutsideWrite(child: ChildProcess, dbPath: string): Promise<void> {
  const probe = new DatabaseSync(dbPath)
  try {
    probe.exec('PRAGMA busy_timeout = 0')
    for (let attempt = 1; ; attempt++) {
      child.kill('SIGSTOP')
      try {
        probe.exec('BEGIN IMMEDIATE')
        probe.exec('ROLLBACK')
        return
      } catch (error) {
        if (attempt >= 200) throw new Error(`could not stop the fixture outside a write: ${String(error)}`)
        child.kill('SIGCONT')
        await new Promise(resolve => setTimeout(resolve, 5))
      }
    }
  } finally {
    probe.close()
  }
}
