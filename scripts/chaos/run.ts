import { writeFile } from 'node:fs/promises'
import { renderChaosReport, runChaos } from './chaos'
import { ChaosOptionError, parseChaosOptions } from './options'

/**
 * `npm run chaos [-- --kills N --seconds N --drain-seconds N --concurrency N --seed N]`: a loopback cluster under
 * random SIGKILLs; prints the figures and exits 1 when any promise was broken (2 for a bad option).
 */
async function main(): Promise<void> {
  let options
  try {
    options = parseChaosOptions(process.argv.slice(2))
  } catch (error) {
    if (error instanceof ChaosOptionError) { console.error(`chaos: ${error.message}`); process.exit(2) }
    throw error
  }
  const report = await runChaos(options, line => console.log(`[chaos] ${line}`))
  for (const line of renderChaosReport(report)) console.log(line)
  // ZIDANE_CHAOS_REPORT=<file>: the whole report (kills, sessions, the model log) as JSON, for a closer look.
  if (process.env.ZIDANE_CHAOS_REPORT) await writeFile(process.env.ZIDANE_CHAOS_REPORT, JSON.stringify({ ...report, output: undefined }, null, 2))
  if (report.violations.length > 0) {
    console.log('--- last lines of the cluster output ---')
    console.log(report.output.slice(-80).join('\n'))
  }
  process.exit(report.violations.length > 0 ? 1 : 0)
}

await main()
