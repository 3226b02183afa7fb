/**
 * `npm run bench [-- --quick] [--only 8,10]`: every benchmark of zidane's durability in one go (see bench/README.md),
 * or only the listed sections. Prints a table and writes `bench/results.json` (not after `--only`: a partial run
 * leaves the full results in place). Variants of one figure run interleaved in this process after a warm-up.
 */
import path from 'node:path'
import { measureChatBrowser } from './chat-browser'
import { measureClusterVsSingle } from './cluster-vs-single'
import { measureConcurrentSessions } from './concurrent-sessions'
import { measureDurabilityOverhead } from './durability-overhead'
import { measureEventLatency } from './event-latency'
import { measureHostileTenant } from './hostile-tenant'
import { measureKillToResumed } from './kill-resume'
import { measureLargeOutputs } from './large-outputs'
import { measureLiveLatency } from './live-latency'
import { measureRealisticLatency } from './realistic-latency'
import { measureSessionLog } from './session-log'
import { measureSqliteSpecifics } from './sqlite-specifics'
import { measureThroughputAgainstCommit } from './throughput-against-commit'
import { parseOptions } from './lib/options'
import { renderTable, writeResults } from './lib/report'
import type { Report } from './lib/report'
import { startBenchServer } from './lib/restate-server'
import type { BenchServer } from './lib/restate-server'
import { benchServices } from './lib/restate-services'

/** A bench section; an `optIn` one runs only when `--only` lists it. */
type Section = { name: string; run: (server: BenchServer) => Promise<void>; optIn?: boolean }

/** The numbers a section's name starts with: `'1-2 durability overhead'` is sections 1 and 2. */
function sectionNumbers(name: string): number[] {
  const [first = Number.NaN, last = first] = (name.split(' ')[0] ?? '').split('-').map(Number)
  return Array.from({ length: Math.max(0, last - first + 1) }, (_, offset) => first + offset)
}

/** The sections `only` lists (all but the opt-in ones when it is empty). */
function selected(sections: readonly Section[], only: readonly number[]): Section[] {
  return only.length === 0 ? sections.filter(section => !section.optIn) : sections.filter(section => sectionNumbers(section.name).some(number => only.includes(number)))
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2))
  const started = performance.now()
  const report: Report = { figures: [], notes: [] }
  const server = await startBenchServer()
  const sections: Section[] = [
    { name: '1-2 durability overhead', run: async target => measureDurabilityOverhead(target, options, report) },
    { name: '3 realistic model latency', run: async target => measureRealisticLatency(target, options, report) },
    { name: '4 kill to resumed', run: async target => measureKillToResumed(target, options, report) },
    { name: '5 concurrent sessions (full stack)', run: async () => measureConcurrentSessions(options, report) },
    { name: '6 sqlite specifics', run: async () => measureSqliteSpecifics(options, report) },
    { name: '7 large outputs on restate', run: async target => measureLargeOutputs(target, options, report) },
    { name: '8 live latency (full stack)', run: async () => measureLiveLatency(options, report) },
    { name: '9 cluster against single node (full stack)', run: async () => measureClusterVsSingle(options, report) },
    { name: '10 session log (full stack)', run: async () => measureSessionLog(options, report) },
    { name: '11 hostile tenant (full stack)', run: async () => measureHostileTenant(options, report) },
    { name: '12 durable event latency', run: async target => measureEventLatency(target, options, report) },
    { name: '13 useChat in a browser (full stack)', run: async () => measureChatBrowser(options, report) },
    { name: '14 throughput against the Nov 30 commit (two full stacks)', run: async () => measureThroughputAgainstCommit(options, report), optIn: true },
  ]
  try {
    await server.serve([...benchServices])
    for (const section of selected(sections, options.only)) {
      const sectionStarted = performance.now()
      process.stderr.write(`[bench] ${section.name}…\n`)
      try {
        await section.run(server)
      } catch (error) {
        report.notes.push(`§${section.name} FAILED: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
      }
      process.stderr.write(`[bench] ${section.name} done in ${((performance.now() - sectionStarted) / 1000).toFixed(1)} s\n`)
    }
  } finally {
    await server.stop()
  }
  const elapsedMs = performance.now() - started
  const only = options.only.length > 0 ? `, only section(s) ${options.only.join(', ')} (bench/results.json left as it was)` : ''
  report.notes.push(`mode ${options.quick ? 'quick' : 'full'}${only}, ${(elapsedMs / 1000).toFixed(0)} s in all`)
  console.log(renderTable(report))
  if (options.only.length === 0) writeResults(path.join(import.meta.dirname, 'results.json'), report, options.quick ? 'quick' : 'full', elapsedMs)
}

await main()
