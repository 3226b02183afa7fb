import { spawn, spawnSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isPortFree } from '../../scripts/stack/check-ports'
import { freeStackPortsEnv } from '../../scripts/stack/free-port'

/** One process of the machine, as `/proc/<pid>/stat` and `cmdline` say. */
interface ProcessEntry { pid: number; parentPid: number; state: string; commandLine: string }

function readProcess(pid: number): ProcessEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name is in parentheses and may hold spaces: the fields after the last ')' are fixed.
    const [state = '', parentPid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
    return { pid, parentPid: Number(parentPid), state, commandLine }
  } catch {
    return undefined
  }
}

/** `rootPid` and every process below it. */
function processTree(rootPid: number): ProcessEntry[] {
  const all = readdirSync('/proc').filter(name => /^\d+$/.test(name)).map(name => readProcess(Number(name))).filter(entry => entry !== undefined)
  const tree = all.filter(entry => entry.pid === rootPid)
  for (let index = 0; index < tree.length; index++) tree.push(...all.filter(entry => entry.parentPid === tree[index]?.pid))
  return tree
}

/** Alive and not a zombie (this machine's init may never reap an orphan's zombie). */
function isRunning(pid: number): boolean {
  const entry = readProcess(pid)
  return entry !== undefined && entry.state !== 'Z'
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await condition()) return true
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return condition()
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

interface StartedStack { npm: ChildProcess; ports: number[]; tree: ProcessEntry[]; output: () => string }

/** `npm start` on free ports in a temporary data folder, until its gateway answers `/readyz`; its whole process tree. */
async function npmStart(): Promise<StartedStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-signals-'))
  const portsEnv = await freeStackPortsEnv()
  const npm = spawn('npm', ['start'], {
    env: { ...process.env, ...portsEnv, ZIDANE_DATA_DIR: dataDir, ANTHROPIC_API_KEY: '', GATEWAY_API_KEYS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  npm.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  npm.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const started: StartedStack = { npm, ports: Object.values(portsEnv).map(Number), tree: [], output: () => output }
  cleanups.push(async () => {
    // A test that failed must not leave its stack behind.
    for (const entry of started.tree) if (isRunning(entry.pid)) process.kill(entry.pid, 'SIGKILL')
    await rm(dataDir, { recursive: true, force: true })
  })
  const readyz = `http://127.0.0.1:${portsEnv.GATEWAY_PORT}/readyz`
  const ready = await waitFor(async () => (await fetch(readyz).catch(() => undefined))?.status === 200, 120_000)
  started.tree = processTree(npm.pid ?? 0)
  expect(ready, output).toBe(true)
  return started
}

function describeTree(tree: ProcessEntry[]): string {
  return tree.map(entry => `${entry.pid} (parent ${entry.parentPid}) ${entry.commandLine.slice(0, 140)}${signalState(entry.pid)}`).join('\n')
}

/** What a process left running is doing: its state, signals pending and caught, and where it sleeps in the kernel. */
function signalState(pid: number): string {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const fields = status.split('\n').filter(line => /^(State|SigPnd|ShdPnd|SigBlk|SigCgt|Threads):/.test(line)).join(', ')
    return `\n    ${fields}, wchan ${readFileSync(`/proc/${pid}/wchan`, 'utf8')}`
  } catch {
    return ''
  }
}

/** Waits until no process of `tree` runs and every port is free; fails naming what is left. */
async function expectAllGone(stack: StartedStack, timeoutMs: number): Promise<void> {
  // A multi-threaded process whose leader is already a zombie still holds its sockets until its last thread has
  // exited (a busy machine makes that slow): the ports are waited for too, not read once.
  await waitFor(async () => stack.tree.every(entry => !isRunning(entry.pid)) && (await heldPorts(stack)).length === 0, timeoutMs)
  const left = stack.tree.filter(entry => isRunning(entry.pid))
  expect(describeTree(left), `left running:\n${describeTree(left)}\n\noutput:\n${stack.output().slice(-3000)}`).toBe('')
  expect(await heldPorts(stack)).toEqual([])
}

/** The stack's ports that a process of its tree (or a process ss cannot name) still listens on. */
async function heldPorts(stack: StartedStack): Promise<number[]> {
  const held = []
  for (const port of stack.ports) if (!(await isPortFree(port, '127.0.0.1')) && heldByTree(port, stack.tree)) held.push(port)
  return held
}

/**
 * Whether a process of `tree` listens on `port` (`ss`). A port freed by the stack can be taken at once by another
 * process of the machine (a second test run picking free ports beside this one): that one is not the stack's.
 */
function heldByTree(port: number, tree: ProcessEntry[]): boolean {
  const listing = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' })
  if (listing.status !== 0) return true
  const pids = [...listing.stdout.matchAll(/pid=(\d+)/g)].map(match => Number(match[1]))
  return pids.length === 0 ? listing.stdout.trim() !== '' : pids.some(pid => tree.some(entry => entry.pid === pid))
}

describe.runIf(process.platform === 'linux')('npm start under a process manager', () => {
  it('stops every process it started, gracefully, when only the npm process gets SIGTERM', async () => {
    const stack = await npmStart()
    // Whole command lines: describeTree cuts them at 140 characters, and a checkout in a longer path cuts the names.
    const names = stack.tree.map(entry => entry.commandLine).join('\n')
    expect(names).toMatch(/restate-server/)
    expect(names).toMatch(/services\/endpoint\.ts/)
    expect(names).toMatch(/ingress-gateway\/server\.ts/)
    const sentAt = Date.now()
    process.kill(stack.npm.pid ?? 0, 'SIGTERM')
    await expectAllGone(stack, 60_000)
    console.log(`npm start stopped on SIGTERM in ${Date.now() - sentAt} ms`)
    // Gracefully: the services drained (one SIGTERM each, from the supervisor) and the supervisor said so last.
    expect(stack.output()).toMatch(/\[services\] zidane services: drained in \d+ ms, exiting/)
    expect(stack.output().trimEnd().split('\n').at(-1)).toBe('[stack] stopped')
  }, 180_000)

  it('takes every process it started down with it when the supervisor is SIGKILLed', async () => {
    const stack = await npmStart()
    const restate = stack.tree.find(entry => entry.commandLine.includes('restate-server'))
    const supervisor = stack.tree.find(entry => entry.pid === restate?.parentPid)
    expect(supervisor?.commandLine).toMatch(/scripts\/start\.ts/)
    const sentAt = Date.now()
    process.kill(supervisor?.pid ?? 0, 'SIGKILL')
    await expectAllGone(stack, 60_000)
    console.log(`npm start's processes ended ${Date.now() - sentAt} ms after the supervisor's SIGKILL`)
  }, 180_000)
})
