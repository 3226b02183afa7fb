import type { JsonValue } from '../../json'
import type { AwakeableOutcome, DurableAwakeable, StepKey } from '../runtime'
import type { SqliteJournal } from './sqlite-journal'
import { rootRunId } from './sqlite-journal'

interface AwakeableRow { value: string | null; timed_out: number }

/**
 * Awakeables stored in the file. Any runtime on the same file may resolve one (first answer wins); a waiting runtime
 * is woken at once by a resolve in its own process and notices other processes' answers by polling every `pollMs`.
 * A wait also ends with `RunTakenOverError` when another process took its run over.
 */
export class SqliteAwakeables {
  private readonly wakers = new Map<string, Set<() => void>>()

  constructor(private readonly journal: SqliteJournal, private readonly pollMs: number) {}

  create<T>(key: StepKey, timeoutMs: number | undefined): DurableAwakeable<T> {
    const id = `awk_${key.name}`
    const runId = rootRunId(key.runId)
    this.journal.defer(undefined, () => { this.journal.sql('INSERT OR IGNORE INTO awakeables (id, run_id) VALUES (?, ?)').run(id, runId) })
    return { id, wait: () => this.wait<T>(id, key.runId, timeoutMs) }
  }

  resolve(id: string, value: JsonValue): void {
    this.journal.transaction('durable', () => {
      this.journal.sql(`INSERT INTO awakeables (id, value, resolved_at) VALUES (?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET value = excluded.value, resolved_at = excluded.resolved_at WHERE awakeables.value IS NULL AND awakeables.timed_out = 0`).run(id, JSON.stringify(value), Date.now())
    })
    for (const wake of this.wakers.get(id) ?? []) wake()
  }

  /** Awakeables nobody resolved yet, with their run: what a host shows as open questions. */
  pending(): Array<{ id: string; runId: string | null }> {
    const rows = this.journal.sql('SELECT id, run_id FROM awakeables WHERE value IS NULL AND timed_out = 0').all() as Array<{ id: string; run_id: string | null }>
    return rows.map(row => ({ id: row.id, runId: row.run_id }))
  }

  private async wait<T>(id: string, runId: string, timeoutMs: number | undefined): Promise<AwakeableOutcome<T>> {
    this.journal.flush()
    const deadline = timeoutMs !== undefined && timeoutMs > 0 ? Date.now() + timeoutMs : undefined
    for (;;) {
      const outcome = this.read<T>(id)
      if (outcome) return outcome
      this.journal.assertOwnerOf(runId)
      if (deadline !== undefined && Date.now() >= deadline) {
        this.journal.transaction('durable', () => { this.journal.sql('UPDATE awakeables SET timed_out = 1 WHERE id = ? AND value IS NULL').run(id) })
        continue
      }
      await this.sleep(id, Math.min(this.pollMs, deadline === undefined ? this.pollMs : Math.max(1, deadline - Date.now())))
    }
  }

  private read<T>(id: string): AwakeableOutcome<T> | undefined {
    this.journal.assertOpen()
    const row = this.journal.sql('SELECT value, timed_out FROM awakeables WHERE id = ?').get(id) as AwakeableRow | undefined
    if (row?.value !== null && row?.value !== undefined) return { timedOut: false, value: JSON.parse(row.value) as T }
    if (row?.timed_out === 1) return { timedOut: true }
    return undefined
  }

  private sleep(id: string, ms: number): Promise<void> {
    return new Promise(resolve => {
      const set = this.wakers.get(id) ?? new Set()
      const done = (): void => {
        clearTimeout(timer)
        set.delete(done)
        if (set.size === 0) this.wakers.delete(id)
        resolve()
      }
      const timer = setTimeout(done, ms)
      set.add(done)
      this.wakers.set(id, set)
    })
  }
}
