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

/** One journal entry of an invocation, in order: its index, its kind, and what it names (step, state key, call target). */
export interface CensusEntry { index: number; kind: string; name: string; bytes: number }

/** An invocation of a run's census: its target, and every entry of its journal in order. */
export interface InvocationCensus { id: string; target: string; entries: CensusEntry[] }

/** Runs an admin-API SQL query (`BenchServer.query`, or a stack's). */
export type AdminQuery = <T>(sql: string) => Promise<T[]>

interface CensusRow { index: number; entry_type: string; name?: string; raw?: string; raw_length?: number; invoked_target?: string }

/** The printable text fields of a protobuf message (state key, call target, object key), ids as placeholders. */
function textFieldsOf(rawHex: string | undefined): string[] {
  const bytes = Buffer.from(rawHex ?? '', 'hex')
  const words: string[] = []
  for (let offset = 0; offset < bytes.length;) {
    let tag = 0
    for (let shift = 0; offset < bytes.length; shift += 7) { const byte = bytes[offset++] ?? 0; tag += (byte & 0x7f) * 2 ** shift; if ((byte & 0x80) === 0) break }
    const wireType = tag & 0x07
    if (wireType === 0) { while (offset < bytes.length && ((bytes[offset++] ?? 0) & 0x80) !== 0); continue }
    if (wireType === 1) { offset += 8; continue }
    if (wireType === 5) { offset += 4; continue }
    if (wireType !== 2) break
    let length = 0
    for (let shift = 0; offset < bytes.length; shift += 7) { const byte = bytes[offset++] ?? 0; length += (byte & 0x7f) * 2 ** shift; if ((byte & 0x80) === 0) break }
    const text = bytes.subarray(offset, offset + length).toString('utf8')
    offset += length
    if (/^[\x20-\x7e]{1,80}$/.test(text) && !text.startsWith('{') && !text.startsWith('[')) words.push(text)
  }
  return words
}

/** What an entry names: a run's step name (run id, turn and call as placeholders), a state key, a call's target. */
function entryName(row: CensusRow): string {
  if (row.entry_type === 'Command: Run') return row.name ? row.name.replace(/run_\d+_[0-9a-f]+/g, '<run>').replace(/demo_\d+_\d+_[0-9a-z]+/g, '<call>') : '(unnamed: ctx.date.now)'
  if (row.entry_type.includes('Call') || row.entry_type.includes('State') || row.entry_type.includes('Attach')) {
    return textFieldsOf(row.raw).map(word => word.replace(/\b(inv|sign|prom)_[0-9A-Za-z_-]+/g, '<$1>')).join(' ')
  }
  return row.name ?? ''
}

/** Every entry of `invocationId`'s journal, in order (`sys_journal`), named as {@link entryName} does. */
export async function journalEntries(query: AdminQuery, invocationId: string): Promise<CensusEntry[]> {
  const rows = await query<CensusRow>(`SELECT index, entry_type, name, raw, raw_length FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
  return rows.map(row => ({ index: Number(row.index), kind: row.entry_type, name: entryName(row), bytes: Number(row.raw_length ?? 0) }))
}

/**
 * The census of a run: the journal of its invocation, then of every invocation it caused (sent or called, found by
 * `invoked_by_id`) and of those `extra` names (the admission's `watch`, which the admission sends, not the run), in
 * the order they were created. A journal Restate did not retain (`journalRetention: 0`) lists no entries.
 */
export async function runCensus(query: AdminQuery, invocationId: string, extra: readonly string[] = []): Promise<InvocationCensus[]> {
  const caused = await query<{ id: string }>(`SELECT id FROM sys_invocation WHERE invoked_by_id = '${invocationId}' ORDER BY created_at`)
  const ids = [invocationId, ...caused.map(row => row.id), ...extra]
  const census: InvocationCensus[] = []
  for (const id of ids) {
    const [row] = await query<{ target: string }>(`SELECT target FROM sys_invocation WHERE id = '${id}'`)
    census.push({ id, target: row?.target ?? '(gone)', entries: await journalEntries(query, id) })
  }
  return census
}

/** A census as a Markdown table per invocation: index, kind, name. */
export function censusTable(census: readonly InvocationCensus[]): string {
  return census.map(invocation => [
    `${invocation.target}: ${invocation.entries.length} entries`,
    '| # | entry | name |', '|---|---|---|',
    ...invocation.entries.map(entry => `| ${entry.index} | ${entry.kind} | ${entry.name} |`),
  ].join('\n')).join('\n\n')
}
