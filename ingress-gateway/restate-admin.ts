import { CURRENT_INVOCATION_STATE_KEY, SESSION_SERVICE } from '../contract/session'
import { GatewayError, RestateCallError } from './errors'
import { describeFailure, restateErrorBody } from './restate-ingress'

const CALL_TIMEOUT_MS = 10_000
const HEALTH_TIMEOUT_MS = 2_000

/**
 * What the gateway asks of Restate's admin API: only cancel (and the reads it needs), and health. The reads run no
 * handler, so a cancel is taken while the services are down; no prompt, answer, steering or session read uses it.
 */
export interface RestateAdmin {
  /** Cancels an invocation (`PATCH /invocations/{id}/cancel`). */
  cancel(invocationId: string): Promise<void>
  /** The invocation that holds session `key`'s object lock (its exclusive handler in progress), from `sys_keyed_service_status`. */
  sessionLockHolder(key: string): Promise<string | undefined>
  /** Whether session `key` ever ran: it holds a record of its invocation in Restate's `state` table. */
  sessionExists(key: string): Promise<boolean>
  /** Whether each Restate API answers its health check. */
  health(): Promise<{ admin: boolean; ingress: boolean }>
}

/** Builds the {@link RestateAdmin} over `fetch`; `ingressUrl` is only for the ingress's health check. */
export function createRestateAdmin(adminUrl: string, ingressUrl: string): RestateAdmin {
  const query = async <T>(sql: string): Promise<T[]> => (await adminCall<{ rows?: T[] }>(`${adminUrl}/query`, 'POST', { query: sql })).rows ?? []
  return {
    async cancel(invocationId) {
      await adminCall(`${adminUrl}/invocations/${encodeURIComponent(invocationId)}/cancel`, 'PATCH')
    },
    async sessionLockHolder(key) {
      const rows = await query<{ invocation_id: string }>(`SELECT invocation_id FROM sys_keyed_service_status WHERE service_name = ${literal(SESSION_SERVICE)} AND service_key = ${literal(key)}`)
      return rows[0]?.invocation_id
    },
    async sessionExists(key) {
      const rows = await query(`SELECT value_utf8 FROM state WHERE service_name = ${literal(SESSION_SERVICE)} AND service_key = ${literal(key)} AND key = ${literal(CURRENT_INVOCATION_STATE_KEY)}`)
      return rows.length > 0
    },
    async health() {
      const [admin, ingress] = await Promise.all([isUp(`${adminUrl}/health`), isUp(`${ingressUrl}/restate/health`)])
      return { admin, ingress }
    },
  }
}

/** An SQL string literal: quotes doubled, so ids and keys cannot break out of it. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

async function adminCall<T>(url: string, method: 'POST' | 'PATCH', body?: unknown): Promise<T> {
  let response: Response
  let text: string
  try {
    response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    })
    text = await response.text()
  } catch (error) {
    throw new GatewayError('restate_unavailable', `Restate's admin API is unreachable (${describeFailure(error)})`, { cause: error })
  }
  if (response.status === 503) throw new GatewayError('restate_unavailable', `Restate's admin API is unavailable: ${text}`)
  if (!response.ok) throw new RestateCallError(response.status, restateErrorBody(text).message)
  return (text === '' ? undefined : JSON.parse(text)) as T
}

async function isUp(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) })
    await response.body?.cancel()
    return response.ok
  } catch {
    return false
  }
}
