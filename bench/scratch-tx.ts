import { DatabaseSync, StatementSync } from 'node:sqlite'
import { SqliteJournal } from '../src/durable/sqlite/sqlite-journal'
import { sqliteVariant } from './lib/variants'
const sync = (process.argv[2] ?? 'NORMAL') as 'FULL' | 'NORMAL'
const acc = new Map<string, { n: number; t: number }>()
const add = (k: string, t: number) => { const a = acc.get(k) ?? { n: 0, t: 0 }; a.n++; a.t += t; acc.set(k, a) }
const proto = SqliteJournal.prototype as unknown as Record<string, (...args: unknown[]) => unknown>
for (const name of ['transaction', 'applyPending', 'assertOwnerOf', 'isSessionFenced']) {
  const orig = proto[name]!
  proto[name] = function (this: unknown, ...args: unknown[]) { const s = performance.now(); try { return orig.apply(this, args) } finally { add(`journal.${name}${name === 'transaction' ? ' ' + String(args[0]) : ''}`, performance.now() - s) } }
}
const origExec = DatabaseSync.prototype.exec
DatabaseSync.prototype.exec = function (sql: string) { const s = performance.now(); try { return origExec.call(this, sql) } finally { add(`exec ${sql}`, performance.now() - s) } }
const sp = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>
for (const m of ['run', 'get', 'all']) { const orig = sp[m]!; sp[m] = function (this: StatementSync, ...args: unknown[]) { const s = performance.now(); try { return orig.apply(this, args) } finally { add(`stmt.${m} ${this.sourceSQL.replace(/\s+/g, ' ').slice(0, 70)}`, performance.now() - s) } } }
const v = sqliteVariant(sync)
const shape = { toolTurns: 20, modelDelayMs: 0 }
for (let i = 0; i < 100; i++) await v.runOnce(shape)
acc.clear()
let t = 0; const R = 200
for (let i = 0; i < R; i++) { const r = await v.runOnce(shape); t += r.wallMs / r.turns }
console.log(sync, 'ms/turn', (t / R).toFixed(3), '(instrumented)')
for (const [k, a] of [...acc].sort((x, y) => y[1].t - x[1].t)) console.log(((a.t / R / 21)).toFixed(4).padStart(8), 'ms/turn', (a.n / R).toFixed(1).padStart(6), '/run', (a.t / a.n).toFixed(4), 'each ', k)
v.close?.()
