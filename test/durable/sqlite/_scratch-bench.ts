import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { createSqliteRuntime as createOld } from '../../../src/durable/sqlite/_old/sqlite-runtime'
import { createDefaultRuntime } from '../../../src/durable/default-runtime'
import { timeScriptedRun } from '../../../bench/lib/scripted-run'
import { commitProbe } from '../../../bench/lib/variants'

const folder = mkdtempSync(path.join(tmpdir(), 'scratch-'))
const variants = {
  def: createDefaultRuntime(),
  oldFull: createOld({ path: path.join(folder, 'of.db') }),
  newFull: createSqliteRuntime({ path: path.join(folder, 'nf.db') }),
  oldNormal: createOld({ path: path.join(folder, 'on.db'), synchronous: 'NORMAL' }),
  newNormal: createSqliteRuntime({ path: path.join(folder, 'nn.db'), synchronous: 'NORMAL' }),
}
const probe = commitProbe()
const delay = Number(process.env.DELAY ?? 0)
const turns = delay ? 10 : 20
const rounds = Number(process.env.ROUNDS ?? 30)
const samples: Record<string, number[]> = { commit: [] }
let k = 0
for (let round = 0; round < rounds + 3; round++) {
  for (const [name, rt] of Object.entries(variants)) {
    const run = await timeScriptedRun({ toolTurns: turns, modelDelayMs: delay }, rt, { sessionId: `s${k++}` })
    if (round >= 3) (samples[name] ??= []).push(run.wallMs / run.turns)
  }
  const c = probe.commits(20)
  if (round >= 3) samples.commit!.push(...c)
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const over = (name: string) => med(samples[name]!.map((v, i) => v - samples.def![i]!))
const pct = (name: string) => med(samples[name]!.map((v, i) => 100 * (v - samples.def![i]!) / samples.def![i]!))
console.log(`default ${med(samples.def!).toFixed(3)} | 2 commits ${(2 * med(samples.commit!)).toFixed(3)} target ${(2.5 * med(samples.commit!)).toFixed(3)}`)
for (const name of ['oldFull', 'newFull', 'oldNormal', 'newNormal']) console.log(`${name.padEnd(10)} ${med(samples[name]!).toFixed(3)} overhead ${over(name).toFixed(3)} (${pct(name).toFixed(1)} %)`)
for (const rt of Object.values(variants)) (rt as { close?: () => void }).close?.()
probe.close()
