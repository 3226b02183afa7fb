import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkoutCommit, DEFAULT_CHECKOUT_PLACE } from '../../bench/lib/commit-checkout'
import { assistantTurns, runGatewayBatch } from '../../bench/lib/gateway-batch'
import { runJournal } from '../../bench/lib/run-journal'
import { startSpawnedStack } from '../../bench/lib/spawned-stack'
import { BASELINE_COMMIT } from '../../bench/throughput-against-commit'

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..')

/*
 * The path bench §14 takes to the Nov 30 commit: its source checked out and installed once (a second bench run
 * reuses the folder), its own stack started by its own scripts/start.ts, demo runs through its gateway, and the run's
 * journal counted on its admin API.
 */
describe('bench §14: the Nov 30 commit side by side', () => {
  it('checks the commit out once, starts its stack, runs sessions through its gateway and counts the run journal', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'zidane-test-checkout-'))
    const place = { root, npmCache: DEFAULT_CHECKOUT_PLACE.npmCache }
    const commit = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short=12', BASELINE_COMMIT], { encoding: 'utf8' }).trim()
    try {
      const first = await checkoutCommit(REPO_ROOT, commit, place)
      expect(first.reused).toBe(false)
      expect(await checkoutCommit(REPO_ROOT, commit, place)).toEqual({ folder: first.folder, reused: true })
      const stack = await startSpawnedStack('nov30-test', first.folder)
      try {
        const ids = [0, 1, 2].map(index => `checkout-${process.pid}-${index}`)
        const batch = await runGatewayBatch(stack, ids, 'write: a.txt one\nwrite: b.txt two', 0)
        expect(batch.failures).toEqual([])
        expect(batch.completed).toBe(3)
        expect(await assistantTurns(stack, ids[0] ?? '')).toBe(3)
        const journal = await runJournal(stack.adminUrl, ids[0] ?? '')
        expect(journal.entries).toBeGreaterThan(6)
        expect(journal.allEntries).toBeGreaterThanOrEqual(journal.entries)
      } finally {
        await stack.stop()
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  }, 600_000)
})
