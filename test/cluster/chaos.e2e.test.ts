import { describe, expect, it } from 'vitest'
import { renderChaosReport, runChaos } from '../../scripts/chaos/chaos'
import type { ChaosReport } from '../../scripts/chaos/chaos'

/** The processes' lines that name a session (`~c<n>/`) a violation names, to tell what happened to it. */
function linesOfViolations(report: ChaosReport): string[] {
  const owners = new Set(report.violations.flatMap(violation => /\bc\d+\b/.exec(violation.detail)?.[0] ?? []))
  return report.output.filter(line => [...owners].some(owner => line.includes(`~${owner}/`) || line.includes(`~${owner}]`))).slice(-300)
}

describe('chaos on the loopback cluster (short run)', () => {
  it('20 random SIGKILLs of services replicas, gateways and Restate nodes break no promise', { timeout: 420_000 }, async () => {
    // Bounded: kills stop after 1.4 × 45 s even when slow restarts (a loaded machine) leave some of the 20 unmade.
    const report = await runChaos({ kills: 20, seconds: 45, drainSeconds: 150, concurrency: 4, seed: 20_261_201 })
    const lines = renderChaosReport(report)
    console.log(lines.join('\n'))
    if (report.violations.length > 0) console.error([...report.output.slice(-150), '---- lines of the sessions with a violation ----', ...linesOfViolations(report)].join('\n'))
    expect(report.violations).toEqual([])
    expect(report.kills.length).toBeGreaterThanOrEqual(10)
    expect(report.kills.length).toBeLessThanOrEqual(20)
    expect(report.sessions.length).toBeGreaterThan(0)
  })
})
