import { INBOX_SERVICE, SESSION_SERVICE } from '../services/contract'
import type { RestateClient } from './restate-client'

// Reads of Restate's own tables through the admin API's SQL endpoint. They run no handler, so they answer while the
// services process is down or restarting (Restate's ingress still takes the work and delivers it later).

/** An SQL string literal: quotes doubled, so ids and keys cannot break out of it. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/**
 * The invocation that holds the virtual object's lock: its exclusive handler in progress (running, suspended or
 * retrying), or undefined when none does. Invocations queued behind it are not listed.
 */
export async function objectLockHolder(restate: RestateClient, service: string, key: string): Promise<string | undefined> {
  const rows = await restate.query<{ invocation_id: string }>(`SELECT invocation_id FROM sys_keyed_service_status WHERE service_name = ${literal(service)} AND service_key = ${literal(key)}`)
  return rows[0]?.invocation_id
}

/**
 * Restate's status of one invocation (`pending`, `scheduled`, `ready`, `running`, `backing-off`, `suspended`,
 * `paused`, `completed`), or undefined when Restate no longer knows it.
 */
export async function invocationStatus(restate: RestateClient, invocationId: string): Promise<string | undefined> {
  const rows = await restate.query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = ${literal(invocationId)}`)
  return rows[0]?.status
}

/** One state value of a virtual object, parsed from its JSON, or undefined when the key holds nothing. */
export async function objectState<T>(restate: RestateClient, service: string, key: string, stateKey: string): Promise<T | undefined> {
  const rows = await restate.query<{ value_utf8: string | null }>(
    `SELECT value_utf8 FROM state WHERE service_name = ${literal(service)} AND service_key = ${literal(key)} AND key = ${literal(stateKey)}`,
  )
  const text = rows[0]?.value_utf8
  return text === undefined || text === null ? undefined : (JSON.parse(text) as T)
}

/** One invocation that starts or feeds a run of a tenant's session: `session/<key>/run`, `…/deliver` or `inbox/<key>/add`. */
export interface RunRow {
  id: string
  service: string
  handler: string
  sessionKey: string
  /** Restate's status ({@link invocationStatus}). */
  status: string
  idempotencyKey?: string
  /** The invocation that sent this one (the `inbox/<key>/add` that scheduled a `deliver`). */
  invokedById?: string
}

/** Invocations of one session that {@link tenantRunRows} returns in any status. */
export interface SessionKeyLookup {
  sessionKey: string
  /** Its invocations with one of these idempotency keys. */
  idempotencyKeys: readonly string[]
  /** Its invocations whose idempotency key has exactly `length` characters and starts with `prefix`. */
  keyPrefixes: ReadonlyArray<{ prefix: string; length: number }>
}

/** What {@link tenantRunRows} looks for besides the unfinished invocations. */
export interface RunRowsLookup {
  /** `<tenant>~`: the tenant's session keys start with it (it holds no `%` or `_`). */
  keyPrefix: string
  sessions: readonly SessionKeyLookup[]
  /** Invocations sent by these are wanted in any status. */
  callerIds: readonly string[]
  limit: number
}

/**
 * The tenant's run invocations Restate has not completed (a `deliver` or `add` queued behind another invocation of
 * its object is left out: the one ahead stands for it), plus those `lookup` names in any status; at most `limit`.
 */
export async function tenantRunRows(restate: RestateClient, lookup: RunRowsLookup): Promise<RunRow[]> {
  const named = [
    `(status <> 'completed' AND (status <> 'pending' OR target_handler_name = 'run'))`,
    ...lookup.sessions.map(sessionLookupSql),
    ...(lookup.callerIds.length > 0 ? [`invoked_by_id IN (${lookup.callerIds.map(literal).join(', ')})`] : []),
  ]
  const rows = await restate.query<{ id: string; service: string; handler: string; session_key: string; status: string; idempotency_key?: string; invoked_by_id?: string }>(
    'SELECT id, target_service_name AS service, target_handler_name AS handler, target_service_key AS session_key, status, idempotency_key, invoked_by_id FROM sys_invocation ' +
      `WHERE target_service_key LIKE ${literal(`${lookup.keyPrefix}%`)} AND ((target_service_name = ${literal(SESSION_SERVICE)} AND target_handler_name IN ('run', 'deliver')) ` +
      `OR (target_service_name = ${literal(INBOX_SERVICE)} AND target_handler_name = 'add')) AND (${named.join(' OR ')}) LIMIT ${lookup.limit}`,
  )
  return rows.map(row => ({
    id: row.id,
    service: row.service,
    handler: row.handler,
    sessionKey: row.session_key,
    status: row.status,
    ...(row.idempotency_key === undefined ? {} : { idempotencyKey: row.idempotency_key }),
    ...(row.invoked_by_id === undefined ? {} : { invokedById: row.invoked_by_id }),
  }))
}

function sessionLookupSql(lookup: SessionKeyLookup): string {
  const keys = [
    ...(lookup.idempotencyKeys.length > 0 ? [`idempotency_key IN (${lookup.idempotencyKeys.map(literal).join(', ')})`] : []),
    ...lookup.keyPrefixes.map(({ prefix, length }) => `(starts_with(idempotency_key, ${literal(prefix)}) AND char_length(idempotency_key) = ${length})`),
  ]
  return `(target_service_key = ${literal(lookup.sessionKey)} AND (${keys.length > 0 ? keys.join(' OR ') : 'false'}))`
}
