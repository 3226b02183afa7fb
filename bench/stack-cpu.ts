/**
 * Where the CPU of §14's burst goes: `npx tsx bench/stack-cpu.ts [--rounds N] [--idle-windows N] [--profile-dir DIR]
 * [--no-baseline]`. Starts the current tree's stack and the Nov 30 commit's (as §14 does, `startSpawnedStack`), warms
 * each up with one burst, then per round sends each stack (order alternated) a burst of 60 sessions × 10 demo turns at
 * once and reads, for every process below the stack's `start.ts`, its CPU (`/proc/<pid>/stat` utime+stime, sampled
 * every 100 ms until 2 s after the last answer; a process born meanwhile counts from zero) by component (Restate
 * server, services, file workers and their bubblewrap, gateway, supervisor), this process's own (the load generator,
 * with the sampler), the machine's (`cpuacct.usage` of the root cgroup: another load on the machine shows there), the
 * invocations created by target (`sys_invocation` counted before and after: handlers whose completed invocations are
 * not retained do not show) and Restate's invoker tasks (`/metrics`). Then one more burst per stack while polling
 * `sys_invocation` every 100 ms, which sees every invocation while it lives. `--idle-windows N` first reads N 5 s
 * windows of each stack at rest. With `--profile-dir`, one more burst per stack runs with V8's sampling profiler
 * (200 µs) on in its services process (its inspector opened by SIGUSR1, closed after), written as
 * `services-current.cpuprofile` and `services-nov30.cpuprofile`: the main thread's wall time while not idle, so a
 * blocking call or a preempted thread counts too; the services' CPU of that burst (all threads) is printed beside it.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { checkoutCommit } from './lib/commit-checkout'
import { runGatewayBatch } from './lib/gateway-batch'
import { adminQuery } from './lib/run-journal'
import { startSpawnedStack } from './lib/spawned-stack'
import { invokerTasks } from './lib/invoker-tasks'
import type { SpawnedStack } from './lib/spawned-stack'

const REPO_ROOT = path.resolve(import.meta.dirname, '..')
const SESSIONS = 60
const WRITE_LINES = 9
const TICK_MS = 1000 / 100 // CLK_TCK
const PROMPT = Array.from({ length: WRITE_LINES }, (_, line) => `write: notes/file-${line}.txt line ${line}`).join('\n')

const argv = process.argv.slice(2)
const option = (name: string): string | undefined => { const index = argv.indexOf(name); return index >= 0 ? argv[index + 1] : undefined }
const ROUNDS = Number(option('--rounds') ?? 3)
const PROFILE_DIR = option('--profile-dir')
const BASELINE = !argv.includes('--no-baseline')
const IDLE_WINDOWS = Number(option('--idle-windows') ?? 1)

interface ProcStat { pid: number; ppid: number; ticks: number; sys: number; start: number; cmd: string }

function stat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // fields[0] is state (field 3); utime is field 14, stime 15, starttime 22
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
    return { pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), sys: Number(fields[12]), start: Number(fields[19]), cmd }
  } catch { return undefined }
}

function allPids(): number[] { return readdirSync('/proc').filter(name => /^\d+$/.test(name)).map(Number) }

/** Every process below `root` (itself included). */
function tree(root: number): ProcStat[] {
  const stats = allPids().map(stat).filter((s): s is ProcStat => s !== undefined)
  const byParent = new Map<number, ProcStat[]>()
  for (const s of stats) byParent.set(s.ppid, [...(byParent.get(s.ppid) ?? []), s])
  const found: ProcStat[] = []
  const rootStat = stats.find(s => s.pid === root)
  const pending = rootStat ? [rootStat] : []
  for (let next = pending.pop(); next; next = pending.pop()) { found.push(next); pending.push(...(byParent.get(next.pid) ?? [])) }
  return found
}

function componentOf(s: ProcStat, all: Map<string, ProcStat>): string {
  const program = (s.cmd.split(' ')[0] ?? '').split('/').pop() ?? ''
  if (program === 'bwrap') return 'file workers: bwrap'
  if (s.cmd.includes('restate-server')) return 'restate server'
  if (s.cmd.includes('zidane-file-worker-') || s.cmd.includes('/file-worker/main.js')) return 'file workers: node'
  if (s.cmd.includes('services/endpoint')) return 'services'
  if (s.cmd.includes('ingress-gateway')) return 'gateway'
  if (s.cmd.includes('scripts/start.ts')) return 'start.ts supervisor'
  const parent = [...all.values()].find(p => p.pid === s.ppid)
  if (parent && parent.cmd.split(' ')[0]?.endsWith('bwrap')) return 'file workers: in sandbox, other'
  return `other: ${s.cmd.slice(0, 50)}`
}

/** Samples the tree of `root` every 100 ms from now; `stop()` returns core-ms per component over the window. */
function cpuWindow(root: number): { stop(): { byComponent: Map<string, number>; processes: Map<string, number>; vanished: number; systemTime: Map<string, number>; born: Map<string, number> } } {
  const key = (s: ProcStat): string => `${s.pid}:${s.start}`
  const first = new Map<string, ProcStat>()
  const last = new Map<string, ProcStat>()
  const bootTicksNow = (): number => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100
  const windowStart = bootTicksNow()
  const sample = (initial: boolean): void => {
    for (const s of tree(root)) {
      const k = key(s)
      if (!first.has(k)) first.set(k, initial || s.start < windowStart ? s : { ...s, ticks: 0, sys: 0 })
      last.set(k, s)
    }
  }
  sample(true)
  const timer = setInterval(() => sample(false), 100)
  return {
    stop() {
      clearInterval(timer)
      sample(false)
      const live = new Set(tree(root).map(key))
      const byComponent = new Map<string, number>()
      const processes = new Map<string, number>()
      const systemTime = new Map<string, number>()
      const born = new Map<string, number>()
      let vanished = 0
      for (const [k, end] of last) {
        const component = componentOf(end, last)
        const delta = (end.ticks - (first.get(k)?.ticks ?? 0)) * TICK_MS
        byComponent.set(component, (byComponent.get(component) ?? 0) + delta)
        const sys = (end.sys - (first.get(k)?.sys ?? 0)) * TICK_MS
        systemTime.set(component, (systemTime.get(component) ?? 0) + sys)
        processes.set(component, (processes.get(component) ?? 0) + 1)
        if (!live.has(k)) vanished += 1
        if (end.start >= windowStart) born.set(component, (born.get(component) ?? 0) + 1)
      }
      return { byComponent, processes, vanished, systemTime, born }
    },
  }
}

/** The pid of the stack's `start.ts` (a child of this process). */
function stackRoot(label: string, taken: Set<number>): number {
  const mine = tree(process.pid).filter(s => s.cmd.includes('scripts/start.ts') && !taken.has(s.pid))
  const found = mine[0]
  if (!found) throw new Error(`no start.ts for ${label}`)
  taken.add(found.pid)
  return found.pid
}

async function invocationCounts(adminUrl: string): Promise<Map<string, number>> {
  const rows = await adminQuery<{ s: string; h: string; n: number }>(adminUrl, 'SELECT target_service_name AS s, target_handler_name AS h, count(*) AS n FROM sys_invocation GROUP BY target_service_name, target_handler_name')
  return new Map(rows.map(row => [`${row.s}/${row.h}`, Number(row.n)]))
}

async function burst(stack: SpawnedStack, tag: string): Promise<{ wallMs: number; completed: number }> {
  const ids = Array.from({ length: SESSIONS }, (_, index) => `cpu-${tag}-${process.pid}-${index}`)
  const batch = await runGatewayBatch(stack, ids, PROMPT, 0)
  if (batch.completed !== batch.sessions) console.error(`${stack.label} ${tag}: ${batch.completed}/${batch.sessions} (${batch.failures.join(', ')})`)
  return { wallMs: batch.wallMs, completed: batch.completed }
}

interface Side { stack: SpawnedStack; root: number; cpu: Map<string, number[]>; sys: Map<string, number[]>; invocations: Map<string, number[]>; seen: Map<string, number[]>; perMin: number[]; vanished: number[] }

async function measureBurst(side: Side, tag: string): Promise<void> {
  const before = await invocationCounts(side.stack.adminUrl)
  const window = cpuWindow(side.root)
  const usage = process.cpuUsage()
  const machine = Number(readFileSync('/sys/fs/cgroup/cpuacct/cpuacct.usage', 'utf8'))
  const tasksBefore = await invokerTasks(side.stack.metricsUrl)
  const { wallMs, completed } = await burst(side.stack, tag)
  await new Promise(resolve => setTimeout(resolve, 2_000)) // trailing invocations (ends' reports, last syncs)
  const generator = process.cpuUsage(usage)
  const { byComponent, vanished, systemTime, born, processes } = window.stop()
  console.log(`  processes seen: ${[...processes].map(([c, n]) => `${c} ${n}`).join(', ')}; born during the burst: ${[...born].map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}`)
  const machineMs = (Number(readFileSync('/sys/fs/cgroup/cpuacct/cpuacct.usage', 'utf8')) - machine) / 1e6
  const tasks = (await invokerTasks(side.stack.metricsUrl)) - tasksBefore
  side.invocations.set('(invoker tasks, metric)', [...(side.invocations.get('(invoker tasks, metric)') ?? []), tasks / SESSIONS])
  side.cpu.set('(check: whole machine, cpuacct root)', [...(side.cpu.get('(check: whole machine, cpuacct root)') ?? []), machineMs / SESSIONS])
  for (const [component, ms] of systemTime) side.sys.set(component, [...(side.sys.get(component) ?? []), ms / SESSIONS])
  const after = await invocationCounts(side.stack.adminUrl)
  byComponent.set('load generator (+ this sampler)', (generator.user + generator.system) / 1000)
  for (const [component, ms] of byComponent) side.cpu.set(component, [...(side.cpu.get(component) ?? []), ms / SESSIONS])
  for (const [target, n] of after) side.invocations.set(target, [...(side.invocations.get(target) ?? []), (n - (before.get(target) ?? 0)) / SESSIONS])
  side.perMin.push((completed / wallMs) * 60_000)
  side.vanished.push(vanished)
  const total = [...byComponent.values()].reduce((a, b) => a + b, 0)
  console.log(`${side.stack.label} ${tag}: ${(completed / wallMs * 60_000).toFixed(1)} sessions/min, wall ${(wallMs / 1000).toFixed(1)} s, ${(total / SESSIONS).toFixed(1)} core-ms/run, vanished processes ${vanished}`)
}

const median = (values: readonly number[]): number => { const sorted = [...values].sort((a, b) => a - b); const mid = Math.floor(sorted.length / 2); return sorted.length % 2 ? sorted[mid] ?? NaN : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2 }

function table(sides: Side[], of: (side: Side) => Map<string, number[]>, unit: string): void {
  const keys = [...new Set(sides.flatMap(side => [...of(side).keys()]))].sort()
  console.log(`| | ${sides.map(side => side.stack.label).join(' | ')} |`)
  console.log(`|---|${sides.map(() => '---:').join('|')}|`)
  for (const key of keys) console.log(`| ${key} | ${sides.map(side => { const v = of(side).get(key); return v ? `${median(v).toFixed(2)} (${v.map(x => x.toFixed(1)).join(', ')})` : '–' }).join(' | ')} |`)
  console.log(`| total ${unit} | ${sides.map(side => { const rows = [...of(side).entries()].filter(([k]) => !k.startsWith('(')).map(([, v]) => v); const perRound = (rows[0] ?? []).map((_, r) => rows.reduce((sum, v) => sum + (v[r] ?? 0), 0)); return `${median(perRound).toFixed(2)} (${perRound.map(x => x.toFixed(1)).join(', ')})` }).join(' | ')} |`)
}

/** Opens the inspector of `pid` (SIGUSR1) and runs `during` with V8's sampling profiler on; returns the profile. */
async function profiled<T>(pid: number, during: () => Promise<T>): Promise<{ result: T; profile: unknown }> {
  process.kill(pid, 'SIGUSR1')
  await new Promise(resolve => setTimeout(resolve, 1_000))
  const targets = (await (await fetch('http://127.0.0.1:9229/json/list')).json()) as Array<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]?.webSocketDebuggerUrl ?? '')
  await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject })
  let id = 0
  const pending = new Map<number, (value: unknown) => void>()
  socket.onmessage = event => { const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown }; if (message.id !== undefined) pending.get(message.id)?.(message.result) }
  const call = async (method: string, params: object = {}): Promise<unknown> => new Promise(resolve => { id += 1; pending.set(id, resolve); socket.send(JSON.stringify({ id, method, params })) })
  await call('Profiler.enable')
  await call('Profiler.setSamplingInterval', { interval: 200 })
  await call('Profiler.start')
  const result = await during()
  const stopped = (await call('Profiler.stop')) as { profile: unknown }
  await call('Profiler.disable')
  void call('Runtime.evaluate', { expression: "setTimeout(() => process.getBuiltinModule('node:inspector').close(), 100)" })
  await new Promise(resolve => setTimeout(resolve, 1_000))
  socket.close()
  return { result, profile: stopped.profile }
}

/** One more burst on `side` while polling `sys_invocation` every 100 ms: distinct invocation ids created meanwhile, by target. */
async function census(side: Side): Promise<void> {
  const query = "SELECT id, target_service_name AS s, target_handler_name AS h FROM sys_invocation WHERE created_at > now() - INTERVAL '60 seconds'"
  const before = new Set((await adminQuery<{ id: string }>(side.stack.adminUrl, query)).map(row => row.id))
  const seen = new Map<string, string>()
  let polling = true
  const poll = (async () => {
    while (polling) {
      for (const row of await adminQuery<{ id: string; s: string; h: string }>(side.stack.adminUrl, query)) if (!before.has(row.id)) seen.set(row.id, `${row.s}/${row.h}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  })()
  await burst(side.stack, 'census')
  await new Promise(resolve => setTimeout(resolve, 2_000))
  polling = false
  await poll
  const counts = new Map<string, number>()
  for (const target of seen.values()) counts.set(target, (counts.get(target) ?? 0) + 1)
  for (const [target, n] of counts) side.seen.set(target, [n / SESSIONS])
}

async function main(): Promise<void> {
  const stacks: SpawnedStack[] = []
  const taken = new Set<number>()
  try {
    const sides: Side[] = []
    // As §14: `ZIDANE_BENCH_CURRENT_REF` (HEAD, a commit) checked out apart, so edits under way in the tree do not count.
    const ref = process.env.ZIDANE_BENCH_CURRENT_REF
    const currentRoot = ref ? (await checkoutCommit(REPO_ROOT, execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short=12', ref], { encoding: 'utf8' }).trim())).folder : REPO_ROOT
    console.log(`current: ${currentRoot}`)
    const current = await startSpawnedStack('current', currentRoot)
    stacks.push(current)
    sides.push({ stack: current, root: stackRoot('HEAD', taken), cpu: new Map(), invocations: new Map(), sys: new Map(), seen: new Map(), perMin: [], vanished: [] })
    if (BASELINE) {
      const checkout = await checkoutCommit(REPO_ROOT, '2e22e21')
      const baseline = await startSpawnedStack('Nov 30 (2e22e21)', checkout.folder)
      stacks.push(baseline)
      sides.push({ stack: baseline, root: stackRoot('Nov 30', taken), cpu: new Map(), invocations: new Map(), sys: new Map(), seen: new Map(), perMin: [], vanished: [] })
    }
    for (const side of sides) await burst(side.stack, 'warmup') // warm-up: a burst like the measured ones
    for (const side of sides) {
      for (let window = 0; window < IDLE_WINDOWS; window += 1) {
        const idle = cpuWindow(side.root)
        await new Promise(resolve => setTimeout(resolve, 5_000))
        console.log(`${side.stack.label} idle 5 s #${window}: ${[...idle.stop().byComponent].filter(([, ms]) => ms > 0).map(([c, ms]) => `${c} ${ms.toFixed(0)} ms`).join(', ')}`)
      }
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      for (const side of order) await measureBurst(side, `r${round}`)
    }
    console.log('\n## core-ms per run by component (median of rounds; each round in brackets)\n')
    table(sides, side => side.cpu, 'core-ms/run')
    console.log('\n## invocations per run by target (created during the burst + 2 s)\n')
    table(sides, side => side.invocations, 'invocations/run')
    console.log(`\nsessions/min: ${sides.map(side => `${side.stack.label} ${side.perMin.map(x => x.toFixed(1)).join(', ')}`).join('; ')}`)
    console.log('\n## system (kernel) part of the core-ms per run\n')
    table(sides, side => side.sys, 'sys core-ms/run')
    for (const side of sides) await census(side)
    console.log('\n## invocations per run seen by polling sys_invocation every 100 ms during one more burst (catches rows not retained)\n')
    table(sides, side => side.seen, 'invocations/run')
    if (PROFILE_DIR) {
      mkdirSync(PROFILE_DIR, { recursive: true })
      for (const [index, side] of sides.entries()) {
        const services = tree(side.root).filter(s => s.cmd.includes('services/endpoint') && s.cmd.startsWith(process.execPath))
        const pid = services.at(-1)?.pid
        if (pid === undefined) throw new Error('no services process')
        const window = cpuWindow(side.root)
        const { result, profile } = await profiled(pid, async () => burst(side.stack, `profile${index}`))
        const cpu = window.stop().byComponent.get('services') ?? NaN
        const file = path.join(PROFILE_DIR, `services-${index === 0 ? 'current' : 'nov30'}.cpuprofile`)
        writeFileSync(file, JSON.stringify(profile))
        console.log(`profiled burst ${side.stack.label}: ${(result.completed / result.wallMs * 60_000).toFixed(1)} sessions/min, wall ${(result.wallMs / 1000).toFixed(1)} s, services CPU ${cpu.toFixed(0)} core-ms (/proc); profile in ${file} (pid ${pid})`)
      }
    }
  } finally {
    for (const stack of stacks.reverse()) await stack.stop()
  }
}

await main()
