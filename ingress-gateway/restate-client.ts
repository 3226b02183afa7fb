import {
  INBOX_SERVICE,
  INBOX_WATCHER_STATE_KEY,
  RESUMER_SERVICE,
  SESSION_SERVICE,
  type AddMessageRequest,
  type AnswerRequest,
  type AnswerResult,
  type CurrentInvocation,
  type SessionInvocation,
  type SessionRunRequest,
  type SessionRunResult,
  type SessionView,
  type SessionViewRequest,
} from '../services/contract'
import { EVENT_WATCH_SERVICE, EVENTS_SERVICE } from '../services/event-log/event-log-contract'
import type { ReadEventsRequest, ReadEventsResult, WatchRequest, WatchResult } from '../services/event-log/event-log-contract'
import { GatewayError, RestateCallError } from './errors'

/** Where Restate listens. */
export interface RestateEndpoints {
  ingressUrl: string
  adminUrl: string
}

/** Accepted send of a `session/<key>/run`. `status` is Restate's: `Accepted`, or `PreviouslyAccepted` for a repeated idempotency key. */
export interface SendResult {
  invocationId: string
  status?: string
}

/** Whether each Restate API answered its health check. */
export interface RestateHealth {
  admin: boolean
  ingress: boolean
}

/**
 * A typed client of the Restate ingress and admin HTTP APIs for the gateway. It forwards no credentials: only
 * `content-type` and `idempotency-key` reach Restate (request headers are stored in the journal). Network failures and
 * timeouts throw `GatewayError('restate_unavailable')`; error statuses throw {@link RestateCallError}.
 */
export interface RestateClient {
  sendRun(key: string, request: SessionRunRequest, idempotencyKey?: string): Promise<SendResult>
  /**
   * Sends a steering message to the session's inbox (`inbox/<key>/add`); once accepted, Restate keeps it durably. Then
   * waits (up to 5 s) for the inbox to have taken it, so that a run killed right after sees it at its next boundary.
   */
  sendMessage(key: string, text: string, idempotencyKey?: string): Promise<SendResult>
  /** Waits for the invocation to end, however long it takes (until `signal` aborts); its output, or a {@link RestateCallError} (409 `Cancelled`, …). */
  attach(invocationId: string, signal?: AbortSignal): Promise<SessionRunResult>
  /** The session's header, usage, pending questions and one page of turns (the newest unless `request` names one). */
  getSession(key: string, request?: SessionViewRequest): Promise<SessionView>
  /** The session's current (or last) run invocation, undefined for a key that never ran; cheaper than {@link RestateClient.getSession}. */
  currentInvocation(key: string): Promise<CurrentInvocation | undefined>
  /** Events of the session's log with `seq > after`, at most `limit`, and the log's count. */
  readEvents(key: string, after: number, limit: number): Promise<ReadEventsResult>
  /** Parks until the session's log holds more than `after` events (its count), or `timeoutMs` passes (`null`). */
  watchEvents(key: string, after: number, timeoutMs: number, signal: AbortSignal): Promise<WatchResult>
  /**
   * Sends the answer to the resumer and waits up to `waitMs` for its verdict. When the services are down the answer
   * stays queued in Restate (it is delivered when they are back) and this resolves `{ outcome: 'accepted' }`.
   */
  answer(awakeableId: string, answer: unknown, waitMs?: number): Promise<AnswerResult | { outcome: 'accepted' }>
  cancel(invocationId: string): Promise<void>
  /** Runs an SQL query on the admin API (`POST /query`): Restate's own tables, answered while the services are down. */
  query<T>(sql: string): Promise<T[]>
  health(): Promise<RestateHealth>
}

const CALL_TIMEOUT_MS = 10_000
/** How long an answer waits for the resumer's verdict before it is reported as accepted (queued in Restate). */
const ANSWER_WAIT_MS = 5_000
/**
 * How long `POST …/messages` waits for the inbox to take its message before the 202. The message is durable once
 * sent; the wait makes "202" also mean "in the inbox, the running run signalled" whenever a services process is up, so
 * a run restarted after a kill right after the 202 finds it at its next boundary.
 */
const MESSAGE_WAIT_MS = 5_000
const neverAborted = new AbortController().signal
const HEALTH_TIMEOUT_MS = 2_000

interface CallOptions {
  method: 'GET' | 'POST' | 'PATCH'
  body?: unknown
  idempotencyKey?: string | undefined
  accept?: string
  /** Replaces the {@link CALL_TIMEOUT_MS} timeout: an attach is held until this aborts. */
  signal?: AbortSignal | undefined
}

/** Tuning of {@link createRestateClient}; every field has a default. */
export interface RestateClientOptions {
  /**
   * Longest one attach (`?wait=true`) is held before it is renewed, default and most {@link MAX_ATTACH_TIMEOUT_MS}:
   * an attach sends no headers until the run ends, and Node's `fetch` gives up on headers after 300 s.
   */
  attachTimeoutMs?: number | undefined
}

/** The default and longest {@link RestateClientOptions.attachTimeoutMs}: below the 300 s `headersTimeout` of Node's `fetch`. */
export const MAX_ATTACH_TIMEOUT_MS = 240_000

/** Builds the {@link RestateClient} over `fetch`. */
export function createRestateClient(endpoints: RestateEndpoints, options: RestateClientOptions = {}): RestateClient {
  const attachTimeoutMs = Math.min(options.attachTimeoutMs ?? MAX_ATTACH_TIMEOUT_MS, MAX_ATTACH_TIMEOUT_MS)
  const ingress = (...parts: string[]): string => [endpoints.ingressUrl, ...parts.map(encodeURIComponent)].join('/')
  const session = (key: string, handler: string): string => `${ingress(SESSION_SERVICE, key)}/${handler}`
  const resumer = (id: string, handler: string): string => `${ingress(RESUMER_SERVICE, id)}/${handler}`
  const attachUrl = (invocationId: string): string => `${endpoints.ingressUrl}/restate/invocation/${encodeURIComponent(invocationId)}/attach`
  /**
   * Waits up to `waitMs` for a sent invocation to finish, whatever its outcome: it is durable in Restate already, so
   * a timeout (no services process up) or an error only means the caller answers without waiting longer.
   */
  const settledWithin = async (invocationId: string, waitMs: number): Promise<boolean> => {
    try {
      await call<unknown>(attachUrl(invocationId), { method: 'GET', signal: AbortSignal.timeout(waitMs) })
      return true
    } catch (error) {
      return !(error instanceof GatewayError && error.code === 'restate_unavailable')
    }
  }
  /**
   * No services process took the message in time (none is up): resolve the running run's armed signal through
   * Restate itself, so that the restarted run calls `inbox/<key>/take` at its next boundary. That call queues behind
   * the message's `add` (one inbox key runs its invocations in order), so the run gets the message instead of passing
   * its boundaries before `add` ran. The signal's id is read from the inbox's state with the admin API's SQL.
   */
  const signalRunDirectly = async (key: string): Promise<void> => {
    try {
      const rows = await call<{ rows?: Array<{ value_utf8?: string }> }>(`${endpoints.adminUrl}/query`, { method: 'POST', body: { query: watcherQuery(key) }, accept: 'application/json' })
      const value = rows.rows?.[0]?.value_utf8
      if (value === undefined) return
      const awakeableId = JSON.parse(value) as unknown
      if (typeof awakeableId !== 'string') return
      await call<unknown>(`${endpoints.ingressUrl}/restate/awakeables/${encodeURIComponent(awakeableId)}/resolve`, { method: 'POST', body: null })
    } catch {
      // Best effort: without it the message is still delivered once, as the next run at worst.
    }
  }
  return {
    async sendRun(key, request, idempotencyKey) {
      return call<SendResult>(`${session(key, 'run')}/send`, { method: 'POST', body: request, idempotencyKey })
    },
    async sendMessage(key, text, idempotencyKey) {
      const request: AddMessageRequest = { text, delivery: 'current' }
      const sent = await call<SendResult>(`${ingress(INBOX_SERVICE, key)}/add/send`, { method: 'POST', body: request, idempotencyKey })
      if (!(await settledWithin(sent.invocationId, MESSAGE_WAIT_MS))) await signalRunDirectly(key)
      return sent
    },
    async attach(invocationId, signal) {
      return attachUntilEnd<SessionRunResult>(attachUrl(invocationId), signal ?? neverAborted, attachTimeoutMs)
    },
    async getSession(key, request = {}) {
      return call<SessionView>(session(key, 'get'), { method: 'POST', body: request })
    },
    async currentInvocation(key) {
      return (await call<SessionInvocation | undefined>(session(key, 'invocation'), { method: 'POST', body: null })) ?? undefined
    },
    async readEvents(key, after, limit) {
      const request: ReadEventsRequest = { after, limit }
      return call<ReadEventsResult>(`${ingress(EVENTS_SERVICE, key)}/read`, { method: 'POST', body: request })
    },
    async watchEvents(key, after, timeoutMs, signal) {
      const request: WatchRequest = { key, after, timeoutMs }
      // The call is held open while the watch is parked: its own deadline is the watch's, plus a margin.
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs + CALL_TIMEOUT_MS)])
      return call<WatchResult>(`${ingress(EVENT_WATCH_SERVICE)}/wait`, { method: 'POST', body: request, signal: deadline })
    },
    async answer(awakeableId, answer, waitMs = ANSWER_WAIT_MS) {
      const request: AnswerRequest = { answer }
      const sent = await call<SendResult>(`${resumer(awakeableId, 'answer')}/send`, { method: 'POST', body: request })
      try {
        return await call<AnswerResult>(attachUrl(sent.invocationId), { method: 'GET', signal: AbortSignal.timeout(waitMs) })
      } catch (error) {
        if (error instanceof GatewayError && error.code === 'restate_unavailable') return { outcome: 'accepted' as const }
        throw error
      }
    },
    async cancel(invocationId) {
      await call<unknown>(`${endpoints.adminUrl}/invocations/${encodeURIComponent(invocationId)}/cancel`, { method: 'PATCH' })
    },
    async query<T>(sql: string) {
      return (await call<{ rows?: T[] }>(`${endpoints.adminUrl}/query`, { method: 'POST', body: { query: sql }, accept: 'application/json' })).rows ?? []
    },
    async health() {
      const [admin, ingressUp] = await Promise.all([
        isUp(`${endpoints.adminUrl}/health`),
        isUp(`${endpoints.ingressUrl}/restate/health`),
      ])
      return { admin, ingress: ingressUp }
    },
  }
}

async function call<T>(url: string, options: CallOptions): Promise<T> {
  const headers: Record<string, string> = {}
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
  if (options.accept !== undefined) headers.accept = options.accept
  let response: Response
  let text: string
  try {
    response = await fetch(url, {
      method: options.method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: options.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS),
    })
    text = await response.text()
  } catch (error) {
    throw new GatewayError('restate_unavailable', `Restate is unreachable (${describeFailure(error)})`, { cause: error })
  }
  if (!response.ok) throw callError(response.status, text)
  return (text === '' ? undefined : JSON.parse(text)) as T
}

/**
 * Attaches to the invocation at `url` until it ends or `signal` aborts, however long that takes: each attach is given
 * up after `renewMs` (before `fetch` would fail it) and made again. Restate answers every attach with the outcome.
 */
async function attachUntilEnd<T>(url: string, signal: AbortSignal, renewMs: number): Promise<T> {
  for (;;) {
    const renewal = AbortSignal.timeout(renewMs)
    try {
      return await call<T>(url, { method: 'GET', signal: AbortSignal.any([signal, renewal]) })
    } catch (error) {
      // Only the renewal's own timeout is retried: the caller's abort, Restate's answers and its outages are not.
      if (!renewal.aborted || signal.aborted) throw error
    }
  }
}

/** The admin SQL that reads the inbox's armed signal of session `key`. */
function watcherQuery(key: string): string {
  const quoted = (text: string): string => `'${text.replaceAll("'", "''")}'`
  return `SELECT value_utf8 FROM state WHERE service_name = ${quoted(INBOX_SERVICE)} AND service_key = ${quoted(key)} AND key = ${quoted(INBOX_WATCHER_STATE_KEY)}`
}

/** Restate's error bodies are `{ code?, message }` JSON; anything else is kept as text. */
function callError(status: number, text: string): RestateCallError | GatewayError {
  let message = text
  let source: string | undefined
  try {
    const parsed = JSON.parse(text) as { message?: unknown; source?: unknown }
    if (typeof parsed.message === 'string') message = parsed.message
    if (typeof parsed.source === 'string') source = parsed.source
  } catch {
    // not JSON: keep the raw text
  }
  if (status === 503) return new GatewayError('restate_unavailable', `Restate is unavailable: ${message}`)
  return new RestateCallError(status, message, source)
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

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.name === 'TimeoutError') return 'timed out'
  const cause = error.cause
  if (!(cause instanceof Error)) return error.message
  return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message
}
