import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { acceptsConnections } from '../../../scripts/stack/check-ports'
import { freePort } from '../../../scripts/stack/free-port'
import { supervise } from '../../../scripts/stack/supervisor'
import type { ProcessHandle } from '../../../scripts/stack/supervisor'
import { waitFor } from '../../helpers/restate/restate-harness'

const handles: ProcessHandle[] = []
afterEach(async () => { for (const handle of handles.splice(0)) await handle.stop() })

/** A supervised Node process that idles until it is killed. */
function idler(): ProcessHandle {
  const handle = supervise({ name: 'idler', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: process.env, log: () => undefined }, () => undefined)
  handles.push(handle)
  return handle
}

async function killAndWait(handle: ProcessHandle): Promise<number | undefined> {
  const child = handle.current()
  const exited = once(child!, 'exit')
  child?.kill('SIGKILL')
  await exited
  return child?.pid
}

describe('supervisor: resume after a planned kill', () => {
  it('starts the killed process at once instead of after its automatic restart delay', async () => {
    const handle = idler()
    const killed = await killAndWait(handle)
    expect(handle.current()?.pid).toBe(killed) // the automatic restart still waits its 100 ms
    handle.resume()
    expect(handle.current()?.pid).not.toBe(killed)
    expect(handle.current()?.exitCode).toBeNull()
  })

  it('leaves a process that already runs again alone: never two copies', async () => {
    const handle = idler()
    await killAndWait(handle)
    await new Promise(resolve => setTimeout(resolve, 300)) // the automatic restart ran
    const restarted = handle.current()
    expect(restarted?.exitCode).toBeNull()
    handle.resume()
    expect(handle.current()).toBe(restarted)
  })
})

interface Watched { handle: ProcessHandle; lines: string[]; fatal: string[] }

/** A supervised Node process running `script`, up once `port` accepts connections; its lines and fatal reasons kept. */
function watched(script: string, port: number): Watched {
  const lines: string[] = []
  const fatal: string[] = []
  const handle = supervise({
    name: 'crasher',
    command: process.execPath,
    args: ['-e', script],
    env: process.env,
    ready: () => acceptsConnections(port),
    maxBackoffMs: 400,
    log: (name, line) => { lines.push(`[${name}] ${line}`) },
  }, reason => { fatal.push(reason) })
  handles.push(handle)
  return { handle, lines, fatal }
}

const restartLines = (lines: readonly string[]): string[] => lines.filter(line => line.startsWith('[stack] crasher exited'))

describe('supervisor: processes that keep exiting', () => {
  it('restarts a process that crashes after it is up however often, backing off up to its cap, and says why each time', async () => {
    const port = await freePort()
    // Listens (up), then dies with exit code 1 as an uncaught error would: a run's step crashing the services.
    const { lines, fatal } = watched(`require('node:net').createServer().listen(${port}, '127.0.0.1', () => setTimeout(() => process.exit(1), 300))`, port)
    await waitFor(() => restartLines(lines).length >= 7 || undefined, 30_000, 'seven restarts')
    expect(fatal).toEqual([])
    const restarts = restartLines(lines).slice(0, 7)
    expect(restarts.every(line => /exited \(code 1\) \d+\.\d s after it started[;,]/.test(line) && !line.includes('before it was up'))).toBe(true)
    expect(restarts.map(line => Number(/restarting in (\d+) ms/.exec(line)?.[1]))).toEqual([100, 200, 400, 400, 400, 400, 400])
    expect(restarts[6]).toContain('7 exits in a row within 30 s of their start')
  }, 40_000)

  it('stops the stack when a process exits five times in a row before it is up: it cannot start', async () => {
    const port = await freePort()
    const { lines, fatal } = watched('process.exit(78)', port)
    await waitFor(() => fatal.length > 0 || undefined, 20_000, 'the fatal reason')
    expect(fatal).toEqual(['crasher exited (code 78) 5 times in a row before it was up; its output above says why'])
    expect(restartLines(lines)).toHaveLength(4)
    expect(restartLines(lines)[0]).toContain('before it was up')
  }, 30_000)
})
