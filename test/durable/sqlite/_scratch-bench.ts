import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { createDefaultRuntime } from '../../../src/durable/default-runtime'
import { timeScriptedRun } from '../../../bench/lib/scripted-run'

const folder = mkdtempSync(path.join(tmpdir(), 'scratch-'))
const full = createSqliteRuntime({ path: path.join(folder, 'f.db') })
const normal = createSqliteRuntime({ path: path.join(folder, 'n.db'), synchronous: 'NORMAL' })
const def = createDefaultRuntime()
const delay = Number(process.env.DELAY ?? 0)
const turns = delay ? 10 : 20
const rounds = Number(process.env.ROUNDS ?? 30)
const samples: Record<string, number[]> = { def: [], full: [], normal: [] }
let k = 0
for (let round = 0; round < rounds + 3; round++) {
  for (const [name, rt] of [['def', def], ['full', full], ['normal', normal]] as const) {
    const run = await timeScriptedRun({ toolTurns: turns, modelDelayMs: delay }, rt, { sessionId: `s${k++}` })
    if (round >= 3) samples[name]!.push(run.wallMs / run.turns)
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const d = med(samples.def!)
console.log(`default ${d.toFixed(3)}  full ${med(samples.full!).toFixed(3)} (+${(med(samples.full!.map((v, i) => v - samples.def![i]!))).toFixed(3)})  normal ${med(samples.normal!).toFixed(3)} (+${(med(samples.normal!.map((v, i) => v - samples.def![i]!))).toFixed(3)})  full% ${med(samples.full!.map((v, i) => 100 * (v - samples.def![i]!) / samples.def![i]!)).toFixed(2)}`)
full.close(); normal.close()
