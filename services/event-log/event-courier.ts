import type { DeliverEventsRequest, DeliverEventsResult, NewSessionEvent } from './event-log-contract'
import { EVENTS_SERVICE } from './event-log-contract'

/**
 * Carries recorded events to their log at once, outside the journal: the fast path of the outbox (see
 * `event-outbox.ts`). Best effort by design: a batch it loses, or one a killed process never sent, reaches the log
 * through the recording invocation's journaled send, and a batch it sends twice is appended once (the log keeps a
 * cursor per source).
 */
export interface EventCourier {
  /** Queues events `from … from+events.length-1` of `source` for the log of `logKey`; already queued ones are skipped. */
  carry(logKey: string, source: string, from: number, events: readonly NewSessionEvent[]): void
  /** Resolves once nothing is queued or in flight (for tests and a clean shutdown). */
  idle(): Promise<void>
  /** Batches posted so far (for figures). */
  batches(): number
}

/** Options of {@link createEventCourier}. */
export interface EventCourierOptions {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  ingressUrl: string
  /**
   * Shortest time between two batches of one source (default 25 ms): the first event after a quiet spell leaves at
   * once, the events that follow it within the window leave together.
   */
  windowMs?: number
  /** Told about a failed batch (the journaled send will bring its events); default silent. */
  onError?: (error: unknown) => void
}

/** Default window between two batches of one source. */
export const DEFAULT_COURIER_WINDOW_MS = 25
/** Most events one batch carries. */
const MAX_BATCH = 256
/** A lane with nothing queued this long is forgotten (a replay in this process after that sends its events again, once). */
const IDLE_LANE_MS = 5 * 60_000

/** The queue of one source towards one log: the events not yet sent, and where they start. */
interface Lane {
  logKey: string
  source: string
  /** Index of `queued[0]`; every event before it was sent (or skipped). */
  next: number
  queued: NewSessionEvent[]
  sending: boolean
  timer: NodeJS.Timeout | undefined
  lastSentMs: number
  touchedMs: number
}

/** A courier posting batches to `events/<key>/deliver` through Restate's ingress, one request at a time per source. */
export function createEventCourier(options: EventCourierOptions): EventCourier {
  const windowMs = options.windowMs ?? DEFAULT_COURIER_WINDOW_MS
  const lanes = new Map<string, Lane>()
  let idleWaiters: Array<() => void> = []
  let batches = 0
  const busy = (): boolean => [...lanes.values()].some(lane => lane.sending || lane.timer !== undefined || lane.queued.length > 0)
  const settle = (): void => {
    if (busy()) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const wake of waiters) wake()
  }

  const schedule = (lane: Lane): void => {
    if (lane.sending || lane.timer !== undefined || lane.queued.length === 0) return
    const waitMs = Math.max(0, lane.lastSentMs + windowMs - performance.now())
    lane.timer = setTimeout(() => {
      lane.timer = undefined
      void send(lane)
    }, waitMs)
  }

  const send = async (lane: Lane): Promise<void> => {
    const events = lane.queued.splice(0, MAX_BATCH)
    const request: DeliverEventsRequest = { source: lane.source, from: lane.next, events }
    lane.next += events.length
    lane.sending = true
    batches += 1
    try {
      await post(options.ingressUrl, lane.logKey, request)
    } catch (error) {
      options.onError?.(error)
    } finally {
      lane.sending = false
      lane.lastSentMs = performance.now()
      schedule(lane)
      settle()
    }
  }

  return {
    carry(logKey, source, from, events) {
      const now = performance.now()
      sweep(lanes, now)
      const id = `${logKey}\u0000${source}`
      const lane = lanes.get(id) ?? { logKey, source, next: from, queued: [], sending: false, timer: undefined, lastSentMs: -Infinity, touchedMs: now }
      lanes.set(id, lane)
      lane.touchedMs = now
      const end = lane.next + lane.queued.length
      if (from > end) { // events this lane never saw (it was forgotten): start again from these
        lane.next = from
        lane.queued = []
      }
      const fresh = events.slice(Math.max(0, lane.next + lane.queued.length - from))
      if (fresh.length === 0) return
      lane.queued.push(...fresh)
      schedule(lane)
    },
    idle() {
      if (!busy()) return Promise.resolve()
      return new Promise(resolve => idleWaiters.push(resolve))
    },
    batches: () => batches,
  }
}

function sweep(lanes: Map<string, Lane>, now: number): void {
  for (const [id, lane] of lanes) if (now - lane.touchedMs > IDLE_LANE_MS && !lane.sending && lane.timer === undefined && lane.queued.length === 0) lanes.delete(id)
}

async function post(ingressUrl: string, logKey: string, request: DeliverEventsRequest): Promise<DeliverEventsResult> {
  const url = `${ingressUrl.replace(/\/$/, '')}/${EVENTS_SERVICE}/${encodeURIComponent(logKey)}/deliver`
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request), signal: AbortSignal.timeout(30_000) })
  if (!response.ok) throw new Error(`events/${logKey}/deliver answered ${response.status}: ${(await response.text()).slice(0, 200)}`)
  return (await response.json()) as DeliverEventsResult
}
