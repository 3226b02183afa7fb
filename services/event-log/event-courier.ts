import http from 'node:http'
import https from 'node:https'
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
  /**
   * Tells the courier that events before `upTo` of `source` travel in the journal (the outbox has issued their
   * journaled send): the queued ones are dropped instead of posted a second time. The send is then proposed, not yet
   * acknowledged; if the attempt fails before it is, the retry issues it again, so the log still gets them, only later.
   */
  journaled(logKey: string, source: string, upTo: number): void
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
   * Shortest time between two batches of one source (default {@link DEFAULT_COURIER_WINDOW_MS}): the first event after
   * a quiet spell leaves at once, the events that follow it within the window leave together.
   */
  windowMs?: number
  /** Told about each failed try of a batch (after its last try the journaled send brings its events); default silent. */
  onError?: (error: unknown) => void
}

/**
 * Default window between two batches of one source: 100 ms. Each batch is one ingress invocation (on the bench
 * machine about 8 ms from post to answer, 4 ms of Restate's CPU and 3.5 ms of the services'), so the window caps
 * what a busy run's courier costs (10 batches a second at most); a quiet run's events still leave one by one, at once.
 */
export const DEFAULT_COURIER_WINDOW_MS = 100
/** Most events one batch carries. */
const MAX_BATCH = 256
/** Most events a lane holds; past it the newest are left to the journaled send (a lane stalled behind a hung ingress). */
const MAX_QUEUED = 4_096
/** Tries of one batch before the courier leaves it to the journaled send. */
const MAX_TRIES = 3
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
  /** Failed tries of the batch at the head of `queued`. */
  failures: number
}

/** A courier posting batches to `events/<key>/deliver` through Restate's ingress, one request at a time per source. */
export function createEventCourier(options: EventCourierOptions): EventCourier {
  const windowMs = options.windowMs ?? DEFAULT_COURIER_WINDOW_MS
  const post = createPoster(options.ingressUrl)
  const lanes = new Map<string, Lane>()
  let idleWaiters: Array<() => void> = []
  let batches = 0
  let sweptMs = performance.now()
  const busy = (): boolean => {
    for (const lane of lanes.values()) if (lane.sending || lane.timer !== undefined || lane.queued.length > 0) return true
    return false
  }
  const settle = (): void => {
    if (idleWaiters.length === 0 || busy()) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const wake of waiters) wake()
  }

  const schedule = (lane: Lane): void => {
    if (lane.sending || lane.timer !== undefined || lane.queued.length === 0) return
    const waitMs = Math.max(0, lane.lastSentMs + windowMs - performance.now())
    const backoffMs = lane.failures > 0 ? Math.max(windowMs, 100) * 2 ** lane.failures : 0
    lane.timer = setTimeout(() => {
      lane.timer = undefined
      void send(lane)
    }, Math.max(waitMs, backoffMs))
    lane.timer.unref()
  }

  const send = async (lane: Lane): Promise<void> => {
    const events = lane.queued.slice(0, MAX_BATCH)
    // Where this batch ends, fixed now: `journaled()` may move the lane on while the batch is in flight.
    const end = lane.next + events.length
    const request: DeliverEventsRequest = { source: lane.source, from: lane.next, events }
    lane.sending = true
    batches += 1
    try {
      const { delivered } = await post(lane.logKey, request)
      lane.failures = 0
      // The log may hold more of this source than this batch (a replay carries what the journal already brought):
      // skip to where it stands, so a replay posts one batch, not the whole invocation again.
      skipTo(lane, Math.max(end, delivered))
    } catch (error) {
      options.onError?.(error)
      lane.failures += 1
      if (lane.failures >= MAX_TRIES) { // leave this batch to the journaled send
        lane.failures = 0
        skipTo(lane, end)
      }
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
      if (now - sweptMs > IDLE_LANE_MS / 10) { // not on every write: a scan of every lane
        sweptMs = now
        sweep(lanes, now)
      }
      const id = laneId(logKey, source)
      const lane = lanes.get(id) ?? { logKey, source, next: from, queued: [], sending: false, timer: undefined, lastSentMs: -Infinity, touchedMs: now, failures: 0 }
      lanes.set(id, lane)
      lane.touchedMs = now
      if (from > lane.next + lane.queued.length) { // events this lane never saw (it was forgotten, or full)
        if (lane.sending) return // the journaled send brings them: a batch in flight still moves this lane
        lane.next = from // start again from these
        lane.queued = []
      }
      const fresh = events.slice(Math.max(0, lane.next + lane.queued.length - from))
      if (fresh.length === 0) return
      lane.queued.push(...fresh.slice(0, Math.max(0, MAX_QUEUED - lane.queued.length)))
      schedule(lane)
    },
    journaled(logKey, source, upTo) {
      const lane = lanes.get(laneId(logKey, source))
      if (!lane) return
      skipTo(lane, upTo)
      if (lane.queued.length === 0 && lane.timer !== undefined) {
        clearTimeout(lane.timer)
        lane.timer = undefined
      }
      settle()
    },
    idle() {
      if (!busy()) return Promise.resolve()
      return new Promise(resolve => idleWaiters.push(resolve))
    },
    batches: () => batches,
  }
}

function laneId(logKey: string, source: string): string {
  return `${logKey}\u0000${source}`
}

/** Drops the queued events before index `next` (sent, or already in the log). */
function skipTo(lane: Lane, next: number): void {
  if (next <= lane.next) return
  lane.queued.splice(0, Math.min(lane.queued.length, next - lane.next))
  lane.next = next
}

function sweep(lanes: Map<string, Lane>, now: number): void {
  for (const [id, lane] of lanes) if (now - lane.touchedMs > IDLE_LANE_MS && !lane.sending && lane.timer === undefined && lane.queued.length === 0) lanes.delete(id)
}

/** How long one batch's connection may stay silent (no byte sent or received) before the courier counts it failed. */
const POST_IDLE_TIMEOUT_MS = 30_000
/** How long a kept-alive connection may wait unused; the ingress may close one it finds idle first. */
const FREE_SOCKET_TIMEOUT_MS = 4_000

/**
 * Posts batches over kept-alive connections with `node:http` (or `node:https`): a fraction of what `fetch` costs per
 * request in the services process, which also runs the agents whose events these are. A batch whose reused
 * connection was reset (the ingress had closed it, or crashed) is sent once more at once, on a connection of its own:
 * a `deliver` that arrives twice appends its events once.
 */
function createPoster(ingressUrl: string): (logKey: string, request: DeliverEventsRequest) => Promise<DeliverEventsResult> {
  const base = new URL(ingressUrl.replace(/\/$/, '') + '/')
  const transport = base.protocol === 'https:' ? https : http
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 16, timeout: FREE_SOCKET_TIMEOUT_MS })
  const postOnce = (url: URL, body: string, via: http.Agent | false): Promise<DeliverEventsResult> => new Promise((resolve, reject) => {
    const outgoing = transport.request(url, { method: 'POST', agent: via, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        try {
          resolve(parseDelivered(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), url))
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)))
        }
      })
    })
    outgoing.setTimeout(POST_IDLE_TIMEOUT_MS, () => outgoing.destroy(new Error(`${url.pathname} was silent for ${POST_IDLE_TIMEOUT_MS} ms`)))
    outgoing.on('error', (error: NodeJS.ErrnoException) => reject(outgoing.reusedSocket && error.code === 'ECONNRESET' ? new StaleSocketError(error) : error))
    outgoing.end(body)
  })
  return async (logKey, request) => {
    const url = new URL(`${EVENTS_SERVICE}/${encodeURIComponent(logKey)}/deliver`, base)
    const body = JSON.stringify(request)
    try {
      return await postOnce(url, body, agent)
    } catch (error) {
      if (!(error instanceof StaleSocketError)) throw error
      return postOnce(url, body, false) // a connection of its own: the pool may hold more that the ingress closed
    }
  }
}

/** A reused kept-alive connection was reset before an answer came (most often the ingress had closed it). */
class StaleSocketError extends Error {
  constructor(cause: Error) {
    super(`a kept-alive connection to the ingress was closed: ${cause.message}`, { cause })
  }
}

/** The answer of `deliver`, or an error for a failed status or a body that is not one. */
function parseDelivered(status: number, text: string, url: URL): DeliverEventsResult {
  if (status < 200 || status >= 300) throw new Error(`${url.pathname} answered ${status}: ${text.slice(0, 200)}`)
  const body = JSON.parse(text) as Partial<DeliverEventsResult>
  if (typeof body.delivered !== 'number' || !Number.isInteger(body.delivered) || body.delivered < 0) throw new Error(`${url.pathname} answered without a count of delivered events: ${text.slice(0, 200)}`)
  return { delivered: body.delivered }
}
