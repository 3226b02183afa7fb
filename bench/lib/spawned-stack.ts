import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { freeStackPortsEnv } from '../../scripts/stack/free-port'
import { UNLIMITED_GATEWAY } from './full-stack'

/** Thrown when a checkout's stack does not answer in time or exits while starting; `code` is stable. */
export class SpawnedStackError extends Error {
  readonly code = 'bench_stack_start_failed'
}

/** A whole stack (Restate server, services, gateway) of one source folder, started by its own `scripts/start.ts`. */
export interface SpawnedStack {
  label: string
  gatewayUrl: string
  adminUrl: string
  /** The Restate node's Prometheus metrics (its fabric port's `/metrics`). */
  metricsUrl: string
  apiKey: string
  /** The last lines the stack printed, for a failure's report. */
  output(): string
  stop(): Promise<void>
}

const START_TIMEOUT_MS = 180_000
const STOP_GRACE_MS = 30_000

/** Resolves once `url` answers 2xx; rejects when `child` exits first or `timeoutMs` passes. */
async function waitHealthy(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new SpawnedStackError(`the stack exited (${String(child.exitCode ?? child.signalCode)}) before ${url} answered`)
    const healthy = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(response => response.ok, () => false)
    if (healthy) return
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  throw new SpawnedStackError(`${url} did not answer within ${timeoutMs} ms`)
}

/** Stops the stack's `start.ts` with SIGTERM (it stops its children), then its whole process group if anything is left. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
    await exited
    clearTimeout(timer)
  }
  // The group is the one this process created for the stack (detached): only its own children are in it.
  try { if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL') } catch { /* already gone */ }
}

/**
 * Starts the stack of `rootDir` as `npm start` would (`node --import tsx scripts/start.ts` in that folder) on free
 * ports, in a temporary data folder, with the demo model, one API key and the gateway's per-key limits lifted (as §5).
 * Both the current tree and an older commit's checkout start the same way, so neither runs in the bench's process.
 */
export async function startSpawnedStack(label: string, rootDir: string): Promise<SpawnedStack> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-spawned-'))
  const ports = await freeStackPortsEnv()
  const apiKey = `zk_bench_${label.replace(/\W+/g, '_')}`
  const loader = pathToFileURL(path.join(rootDir, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href
  const env = { ...process.env, ...ports, ...UNLIMITED_GATEWAY, ZIDANE_ROOT: rootDir, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: apiKey, ANTHROPIC_API_KEY: '', ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces'), RESTATE_LOG_FILTER: 'error' }
  const child = spawn(process.execPath, ['--import', loader, path.join(rootDir, 'scripts', 'start.ts')], { cwd: rootDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const keep = (chunk: Buffer): void => { lines.push(...chunk.toString().split('\n').filter(Boolean)); lines.splice(0, Math.max(0, lines.length - 40)) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const stop = async (): Promise<void> => { await stopGroup(child); await rm(dataDir, { recursive: true, force: true }) }
  const gatewayUrl = `http://127.0.0.1:${ports.GATEWAY_PORT ?? ''}`
  try {
    await waitHealthy(`${gatewayUrl}/healthz`, child, START_TIMEOUT_MS)
  } catch (error) {
    await stop()
    throw new SpawnedStackError(`${label} stack (${rootDir}) did not start:\n${lines.join('\n')}`, { cause: error })
  }
  return { label, gatewayUrl, adminUrl: `http://127.0.0.1:${ports.RESTATE_ADMIN_PORT ?? ''}`, metricsUrl: `http://127.0.0.1:${ports.RESTATE_FABRIC_PORT ?? ''}/metrics`, apiKey, output: () => lines.join('\n'), stop }
}
