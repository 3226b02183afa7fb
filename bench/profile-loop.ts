/**
 * `npx tsx bench/profile-loop.ts [--runtime default|restate|both|sqlite] [--synchronous FULL|NORMAL] [--runs N] [--top N]
 * [--out DIR]`: the loop's own work per turn, profiled. Runs §1–2's scripted 21-turn run (instant model, one tool call
 * a turn) many times on the default (in-memory) runtime and on the Restate runtime (`BenchAgent` on a local server,
 * served in this process), or on the SQLite runtime alone (`--runtime sqlite`, at `--synchronous`, default FULL),
 * with V8's sampling profiler on only while the measured runs go (after a warm-up), and prints the functions with the
 * most self time: ours (`src/`) apart, then every function, then the self time per package. Each profile is written to
 * `--out` (default: a temporary folder) as a `.cpuprofile` that Chrome DevTools opens.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import type { Profiler } from 'node:inspector'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createDefaultRuntime } from 'zidane/durable'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { startBenchServer } from './lib/restate-server'
import type { BenchServer } from './lib/restate-server'
import { benchServices } from './lib/restate-services'
import type { BenchRunResult } from './lib/restate-services'
import type { ScriptedRunShape } from './lib/scripted-run'
import { timeScriptedRun } from './lib/scripted-run'

const SHAPE: ScriptedRunShape = { toolTurns: 20, modelDelayMs: 0 }
const SAMPLING_INTERVAL_US = 100
const SOURCE_FOLDER = `${path.resolve(import.meta.dirname, '..', 'src')}${path.sep}`
/** The bench's model: in `src/`, but not the loop's work (its own copy of each request's messages, for tests). */
const SCRIPTED_MODEL = `${SOURCE_FOLDER}providers${path.sep}scripted-provider.ts`

/** One function's self time across the profile, keyed by name and place. */
interface FunctionTime { name: string; place: string; selfMs: number }

/** Runs `count` scripted runs one after the other; returns the summed wall time and turns (as §1–2 time them). */
type RunBatch = (count: number) => Promise<{ wallMs: number; turns: number }>

let sequence = 0

function defaultBatch(): RunBatch {
  return async count => {
    let wallMs = 0
    let turns = 0
    for (let index = 0; index < count; index++) {
      const run = await timeScriptedRun(SHAPE, createDefaultRuntime(), { sessionId: `profile-${++sequence}` })
      wallMs += run.wallMs
      turns += run.turns
    }
    return { wallMs, turns }
  }
}

/** Runs on one SQLite runtime (its file in a temporary folder), as §1 runs them; `close` removes the folder. */
function sqliteBatch(synchronous: 'FULL' | 'NORMAL'): { batch: RunBatch; close: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'zidane-profile-sqlite-'))
  const runtime = createSqliteRuntime({ path: path.join(folder, 'sessions.db'), synchronous })
  const batch: RunBatch = async count => {
    let wallMs = 0
    let turns = 0
    for (let index = 0; index < count; index++) {
      const run = await timeScriptedRun(SHAPE, runtime, { sessionId: `profile-${++sequence}` })
      wallMs += run.wallMs
      turns += run.turns
    }
    return { wallMs, turns }
  }
  return { batch, close: () => { runtime.close(); rmSync(folder, { recursive: true, force: true }) } }
}

function restateBatch(server: BenchServer): RunBatch {
  return async count => {
    let wallMs = 0
    let turns = 0
    for (let index = 0; index < count; index++) {
      const { body } = await server.call<BenchRunResult>(`BenchAgent/profile-${process.pid}-${++sequence}/run`, SHAPE)
      wallMs += body.wallMs
      turns += body.turns
    }
    return { wallMs, turns }
  }
}

/** Profiles `count` runs of `batch` after `warmup` unprofiled ones. */
async function profileBatch(batch: RunBatch, warmup: number, count: number): Promise<{ profile: Profiler.Profile; msPerTurn: number }> {
  await batch(warmup)
  const inspector = new Session()
  inspector.connect()
  try {
    await inspector.post('Profiler.enable')
    await inspector.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US })
    await inspector.post('Profiler.start')
    const { wallMs, turns } = await batch(count)
    const { profile } = await inspector.post('Profiler.stop')
    return { profile, msPerTurn: wallMs / turns }
  } finally {
    inspector.disconnect()
  }
}

/** Self time per function (summed over the profile's nodes of one name and place), most first. */
function selfTimes(profile: Profiler.Profile): FunctionTime[] {
  const nodeMs = new Map<number, number>()
  const deltas = profile.timeDeltas ?? []
  ;(profile.samples ?? []).forEach((nodeId, index) => nodeMs.set(nodeId, (nodeMs.get(nodeId) ?? 0) + (deltas[index] ?? 0) / 1000))
  const byFunction = new Map<string, FunctionTime>()
  for (const node of profile.nodes) {
    const { functionName } = node.callFrame
    const place = placeOf(node.callFrame)
    const key = `${functionName}@${place}`
    const entry = byFunction.get(key) ?? { name: functionName === '' ? '(anonymous)' : functionName, place, selfMs: 0 }
    entry.selfMs += nodeMs.get(node.id) ?? 0
    byFunction.set(key, entry)
  }
  return [...byFunction.values()].sort((left, right) => right.selfMs - left.selfMs)
}

/**
 * Time charged to our functions: each sample goes to the nearest frame of ours (`src/`) on its stack, so the time a
 * function spends in libraries and built-ins it calls (hookable, ajv, `structuredClone`, the SDK's serde) counts as
 * its own; samples with no frame of ours are left out.
 */
function chargedToOurs(profile: Profiler.Profile): FunctionTime[] {
  const parents = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
  const nodes = new Map(profile.nodes.map(node => [node.id, node]))
  const deltas = profile.timeDeltas ?? []
  const charged = new Map<string, FunctionTime>()
  ;(profile.samples ?? []).forEach((nodeId, index) => {
    let id: number | undefined = nodeId
    while (id !== undefined && !placeOf(nodes.get(id)?.callFrame).startsWith(SOURCE_FOLDER)) id = parents.get(id)
    const frame = id === undefined ? undefined : nodes.get(id)?.callFrame
    if (!frame) return
    const key = `${frame.functionName}@${placeOf(frame)}`
    const entry = charged.get(key) ?? { name: frame.functionName === '' ? '(anonymous)' : frame.functionName, place: placeOf(frame), selfMs: 0 }
    entry.selfMs += (deltas[index] ?? 0) / 1000
    charged.set(key, entry)
  })
  return [...charged.values()].sort((left, right) => right.selfMs - left.selfMs)
}

function placeOf(frame: Profiler.ProfileNode['callFrame'] | undefined): string {
  if (!frame || frame.url === '') return ''
  return `${frame.url.replace(/^file:\/\//, '')}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`
}

/** Where a function lives: `ours`, a package of node_modules, `node` (built-ins) or a V8 pseudo-frame. */
function ownerOf(time: FunctionTime): string {
  if (time.place.startsWith(SCRIPTED_MODEL)) return 'the scripted model (src/providers/scripted-provider.ts)'
  if (time.place.startsWith(SOURCE_FOLDER)) return 'ours (src/)'
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(time.place)
  if (match?.[1]) return match[1]
  if (time.place.startsWith('node:')) return 'node built-ins'
  if (time.place === '') return time.name
  return path.relative(path.dirname(SOURCE_FOLDER), time.place).split(path.sep)[0] ?? time.place
}

function printTable(title: string, rows: readonly FunctionTime[], totalMs: number, turns: number): void {
  console.log(`\n${title}`)
  for (const row of rows) {
    const place = row.place.startsWith(SOURCE_FOLDER) ? row.place.slice(SOURCE_FOLDER.length) : row.place
    console.log(`  ${(row.selfMs / turns * 1000).toFixed(1).padStart(7)} µs/turn ${(100 * row.selfMs / totalMs).toFixed(1).padStart(5)} %  ${row.name}  ${place}`)
  }
}

function report(name: string, profile: Profiler.Profile, msPerTurn: number, turns: number, top: number): void {
  const times = selfTimes(profile)
  const totalMs = times.reduce((sum, time) => sum + time.selfMs, 0)
  const busy = times.filter(time => time.name !== '(idle)' && time.name !== '(program)')
  console.log(`\n=== ${name}: ${msPerTurn.toFixed(4)} ms per turn (runs timed as §1–2 time them), ${turns} turns profiled, ${totalMs.toFixed(0)} ms sampled ===`)
  printTable(`top ${top} functions of ours (src/) by self time`, busy.filter(time => ownerOf(time) === 'ours (src/)').slice(0, top), totalMs, turns)
  printTable(`top ${top} functions of ours by self time plus the time of what they call outside src/`, chargedToOurs(profile).slice(0, top), totalMs, turns)
  printTable(`top ${top} functions by self time (all code)`, busy.slice(0, top), totalMs, turns)
  const owners = new Map<string, number>()
  for (const time of times) owners.set(ownerOf(time), (owners.get(ownerOf(time)) ?? 0) + time.selfMs)
  printTable('self time per owner', [...owners].map(([owner, selfMs]) => ({ name: owner, place: '', selfMs })).sort((left, right) => right.selfMs - left.selfMs).slice(0, top), totalMs, turns)
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runtime: { type: 'string', default: 'both' }, synchronous: { type: 'string', default: 'FULL' }, runs: { type: 'string' }, top: { type: 'string', default: '25' }, out: { type: 'string' } } })
  const top = Number(values.top)
  const out = values.out ?? mkdtempSync(path.join(tmpdir(), 'zidane-profile-'))
  mkdirSync(out, { recursive: true })
  const profileOne = async (name: string, batch: RunBatch, runs: number): Promise<void> => {
    const { profile, msPerTurn } = await profileBatch(batch, Math.ceil(runs / 5), runs)
    const file = path.join(out, `${name}.cpuprofile`)
    writeFileSync(file, JSON.stringify(profile))
    report(name, profile, msPerTurn, runs * (SHAPE.toolTurns + 1), top)
    console.log(`  profile: ${file}`)
  }
  if (values.runtime === 'sqlite') {
    const synchronous = values.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'
    const sqlite = sqliteBatch(synchronous)
    try {
      await profileOne(`sqlite-${synchronous}`, sqlite.batch, Number(values.runs ?? 500))
    } finally {
      sqlite.close()
    }
    return
  }
  if (values.runtime !== 'restate') await profileOne('default', defaultBatch(), Number(values.runs ?? 2000))
  if (values.runtime === 'default') return
  const server = await startBenchServer()
  try {
    await server.serve([...benchServices])
    await profileOne('restate', restateBatch(server), Number(values.runs ?? 200))
  } finally {
    await server.stop()
  }
}

await main()
