import type { BenchServer } from './restate-server'

/** One kind of journal entry of an invocation: how many there were and their total encoded size. */
export interface EntryKind { label: string; count: number; bytes: number }

/** What an invocation's journal holds, from the admin SQL `sys_journal` table. */
export interface JournalCensus {
  entries: number
  /** `Command: Run` entries: each is one awaited round trip to the server (`ctx.run`, `ctx.date.now`). */
  runCommands: number
  bytes: number
  kinds: EntryKind[]
}

interface JournalRow { entry_type: string; name?: string; raw?: string; raw_length?: number }

/** The state key inside a SetState / GetEagerState entry (field 1 of the encoded message), or '' when absent. */
function stateKeyOf(rawHex: string | undefined): string {
  if (!rawHex || !rawHex.startsWith('0a')) return ''
  const length = Number.parseInt(rawHex.slice(2, 4), 16)
  return Buffer.from(rawHex.slice(4, 4 + 2 * length), 'hex').toString('utf8')
}

/** A stable label: step names (and their intents') lose their run id, turn number and call id; unnamed runs are `ctx.date.now()`. */
function labelOf(row: JournalRow): string {
  if (row.entry_type === 'Command: SetState' || row.entry_type === 'Command: GetEagerState') return `${row.entry_type} ${stateKeyOf(row.raw)}`
  if (row.entry_type !== 'Command: Run') return row.entry_type
  if (!row.name) return 'Command: Run (unnamed: ctx.date.now)'
  return `Command: Run ${row.name.replace(/^(intent:)?run_[^/]+/, '$1<run>').replace(/\/t\d+\//, '/t<n>/').replace(/call_\d+/, '<call>')}`
}

/** Counts the entries of `invocationId`'s journal by kind. */
export async function journalCensus(server: BenchServer, invocationId: string): Promise<JournalCensus> {
  const rows = await server.query<JournalRow>(`SELECT entry_type, name, raw, raw_length FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
  const kinds = new Map<string, EntryKind>()
  for (const row of rows) {
    const label = labelOf(row)
    const kind = kinds.get(label) ?? { label, count: 0, bytes: 0 }
    kind.count += 1
    kind.bytes += row.raw_length ?? 0
    kinds.set(label, kind)
  }
  return {
    entries: rows.length,
    runCommands: rows.filter(row => row.entry_type === 'Command: Run').length,
    bytes: rows.reduce((sum, row) => sum + (row.raw_length ?? 0), 0),
    kinds: [...kinds.values()],
  }
}

/** `kind ×count (bytes)` for every kind, for the notes. */
export function describeKinds(census: JournalCensus): string {
  return census.kinds.map(kind => `${kind.label} ×${kind.count} (${(kind.bytes / 1024).toFixed(1)} KiB)`).join('; ')
}
