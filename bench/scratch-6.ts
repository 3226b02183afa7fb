import { measureSqliteSpecifics } from './sqlite-specifics'
import { parseOptions } from './lib/options'
import { renderTable } from './lib/report'
const report = { figures: [], notes: [] }
await measureSqliteSpecifics(parseOptions(['--quick']), report)
console.log(renderTable(report))
