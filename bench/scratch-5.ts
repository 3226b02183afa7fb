import { measureConcurrentSessions } from './concurrent-sessions'
import { parseOptions } from './lib/options'
import { renderTable } from './lib/report'
const report = { figures: [], notes: [] }
await measureConcurrentSessions(parseOptions(['--quick']), report)
console.log(renderTable(report))
