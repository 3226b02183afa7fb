/** The journal of one session's run on a stack, from its admin API. */
export interface RunJournal {
  /** Entries of the session's `session/run` invocation (`sys_journal`). */
  entries: number
  /** Invocations keyed by the session (any service), and their journal entries in all (`sys_invocation.journal_size`). */
  invocations: number
  allEntries: number
}

/** Runs `sql` on the admin API at `adminUrl` (`POST /query`). */
export async function adminQuery<T>(adminUrl: string, sql: string): Promise<T[]> {
  const response = await fetch(`${adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
  if (!response.ok) throw new Error(`admin query at ${adminUrl} answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { rows: T[] }).rows
}

/**
 * The journal of `sessionId`'s run: its `session/run` invocation (the one object key ending in the id, as the gateway
 * prefixes the tenant) and every invocation keyed by the session. The run's journal must be retained (both the
 * current tree and the Nov 30 commit keep completed journals a day: `restate.toml`).
 */
export async function runJournal(adminUrl: string, sessionId: string): Promise<RunJournal> {
  const keyed = await adminQuery<{ id: string; target_service_name: string; target_handler_name: string; journal_size: number }>(adminUrl, `SELECT id, target_service_name, target_handler_name, journal_size FROM sys_invocation WHERE target_service_key LIKE '%${sessionId}'`)
  const run = keyed.find(row => row.target_service_name === 'session' && row.target_handler_name === 'run')
  if (!run) throw new Error(`no session/run invocation for ${sessionId} at ${adminUrl}`)
  const [counted] = await adminQuery<{ entries: number }>(adminUrl, `SELECT count(*) AS entries FROM sys_journal WHERE id = '${run.id}'`)
  return { entries: Number(counted?.entries ?? Number.NaN), invocations: keyed.length, allEntries: keyed.reduce((sum, row) => sum + Number(row.journal_size ?? 0), 0) }
}
