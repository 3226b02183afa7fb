import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { timeScriptedRun } from '../../../bench/lib/scripted-run'
const folder = mkdtempSync(path.join(tmpdir(), 'scratch-'))
const normal = createSqliteRuntime({ path: path.join(folder, 'n.db'), synchronous: (process.env.SYNC ?? 'NORMAL') as 'NORMAL' })
let k = 0
const t = performance.now(); let turns = 0
for (let round = 0; round < 200; round++) { const r = await timeScriptedRun({ toolTurns: 20, modelDelayMs: 0 }, normal, { sessionId: `s${k++}` }); turns += r.turns }
console.log(((performance.now() - t) / turns).toFixed(3), 'ms/turn')
normal.close()
