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

/**
 * How many invocations of `handlers` of `service` whose key starts with `keyPrefix` Restate has not completed
 * (running, queued, suspended, retrying): a tenant's runs in flight when `handlers` are the ones that run agents (the
 * shared reads are left out: one left unfinished while the services are down is no run). `keyPrefix` must hold no `%`
 * or `_` (a tenant id does not).
 */
export async function unfinishedInvocationCount(restate: RestateClient, service: string, handlers: readonly string[], keyPrefix: string): Promise<number> {
  const rows = await restate.query<{ unfinished: number | string }>(
    `SELECT count(*) AS unfinished FROM sys_invocation WHERE target_service_name = ${literal(service)} AND target_handler_name IN (${handlers.map(literal).join(', ')}) ` +
      `AND target_service_key LIKE ${literal(`${keyPrefix}%`)} AND status <> 'completed'`,
  )
  return Number(rows[0]?.unfinished ?? 0)
}
