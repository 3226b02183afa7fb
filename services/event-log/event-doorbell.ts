import http from 'node:http'
import https from 'node:https'
import type { EventCursor, SyncEventsRequest, SyncEventsResult } from '../../contract/event-log'
import { EVENTS_SERVICE } from '../../contract/event-log'

/**
 * Wakes a session's event log when the session's run wrote something: it calls `events/<key>/sync` through Restate's
 * ingress, outside the journal. It carries no event (the log reads them from the session's state), so a ring lost or
 * made twice changes nothing but when the log catches up: the run's journaled syncs (before it waits, at its end)
 * are the certain path.
 */
export interface EventDoorbell {
  /**
   * Asks the log of `logKey` to sync; `state` says what the session held after the write (turns and runs). With
   * `laterMs` the call may wait that long for a ring that wants it sooner (a write in the middle of a turn).
   */
  ring(logKey: string, state: Counts, laterMs?: number): void
  /**
   * Says that a journaled sync of `logKey` will bring what the session held at `state`: a ring waiting for no more
   * than that is dropped (a run's last writes are synced once, by its journal, not a second time by a ring).
   */
  covered(logKey: string, state: Counts): void
  /** Resolves once no sync is waiting or in flight (for tests and the bench). */
  idle(): Promise<void>
  /** Syncs called so far (for figures). */
  calls(): number
}

/** What the session held after a write: its turns and run records. */
export type Counts = Required<Pick<SyncEventsRequest, 'turns' | 'runs'>>

/** Options of {@link createEventDoorbell}. */
export interface EventDoorbellOptions {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  ingressUrl: string
  /**
   * Shortest time between two syncs of one log (default {@link DEFAULT_DOORBELL_WINDOW_MS}): the first ring after a
   * quiet spell calls at once, the rings that follow within the window share one call.
   */
  windowMs?: number
  /**
   * Shortest time between two syncs of a log no viewer follows (default {@link DEFAULT_UNWATCHED_WINDOW_MS}): nobody
   * waits for its events, and the run's journaled syncs bring them at the latest.
   */
  unwatchedWindowMs?: number
  /**
   * Whether a viewer follows the session of `logKey` live through this process (the live hub has a listener for it,
   * as every stream of the gateway does): its log is then rung within `windowMs` at once, whatever its last sync said.
   * Default: never (only the syncs' answers say).
   */
  followed?: (logKey: string) => boolean
  /** Told about each failed call (its writes reach the log at the next sync); default silent. */
  onError?: (error: unknown) => void
}

/**
 * Default window between two syncs of one log: 25 ms. Each sync is two short invocations (the log's `sync` and the
 * session's shared `changes`), so the window caps what a busy run's log costs (40 syncs a second at most) and bounds
 * how long a write waits for its sync.
 */
export const DEFAULT_DOORBELL_WINDOW_MS = 25
/**
 * Default window of a log no viewer follows: 5 s. Each sync says whether a viewer follows the log, so a viewer who
 * arrives while its session runs gets the new events within this window once, then within the window above; one who
 * follows the live deltas through this process (`followed`) gets them at once. A ring of such a log only asks whether
 * a viewer came (the log then reads nothing): the run's journaled syncs bring its events, and a viewer's subscription
 * brings them when it comes. At 1 s these questions were most of a burst's event-log invocations (about 2 of 3 per
 * 10-turn run) and one a second for every running session nobody follows.
 */
export const DEFAULT_UNWATCHED_WINDOW_MS = 5_000
/** How long a followed log's lane keeps the cursor its last sync returned, for the next ring to pass on. */
const CURSOR_KEEP_MS = 10_000
/** How long a sync call may stay silent before the doorbell gives up on it (the next ring calls again). */
const CALL_IDLE_TIMEOUT_MS = 30_000
/** How long a kept-alive connection may wait unused; the ingress may close one it finds idle first. */
const FREE_SOCKET_TIMEOUT_MS = 4_000

/**
 * One log's ring state: the state to sync to (merged rings), whether a call is in flight or waits for its window,
 * whether the last sync said a viewer follows the log, and where it left the log (passed on as a hint).
 */
interface Lane { wanted: Counts | undefined; dueMs: number; calling: boolean; timer: NodeJS.Timeout | undefined; lastCallMs: number; watched: boolean; cursor?: EventCursor | undefined; forget?: NodeJS.Timeout }

/** A doorbell calling `events/<key>/sync` through Restate's ingress, one call at a time per log. */
export function createEventDoorbell(options: EventDoorbellOptions): EventDoorbell {
  const windowMs = options.windowMs ?? DEFAULT_DOORBELL_WINDOW_MS
  const unwatchedWindowMs = options.unwatchedWindowMs ?? DEFAULT_UNWATCHED_WINDOW_MS
  const call = createCaller(options.ingressUrl)
  const lanes = new Map<string, Lane>()
  let idleWaiters: Array<() => void> = []
  let calls = 0
  const busy = (): boolean => [...lanes.values()].some(lane => lane.calling || lane.timer !== undefined)
  const settle = (): void => {
    if (busy()) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const wake of waiters) wake()
  }
  // A viewer following the session live through this process counts as the sync's answer would.
  const watched = (logKey: string, lane: Lane): boolean => lane.watched || options.followed?.(logKey) === true
  const schedule = (logKey: string, lane: Lane): void => {
    if (lane.calling || lane.timer !== undefined) return
    if (!lane.wanted) {
      // Nothing to do: forgotten once its cursor is likely stale, or for a log nobody follows once its window has
      // passed (its next ring must wait for that window too).
      const keepMs = lane.lastCallMs + (watched(logKey, lane) ? CURSOR_KEEP_MS : unwatchedWindowMs) - performance.now()
      if (keepMs <= 0) lanes.delete(logKey)
      else lane.forget = setTimeout(() => { if (lanes.get(logKey) === lane && !lane.wanted && !lane.calling) lanes.delete(logKey) }, keepMs).unref()
      settle()
      return
    }
    clearTimeout(lane.forget)
    const atMs = Math.max(lane.dueMs, lane.lastCallMs + (watched(logKey, lane) ? windowMs : unwatchedWindowMs))
    lane.timer = setTimeout(() => {
      lane.timer = undefined
      void send(logKey, lane)
    }, Math.max(0, atMs - performance.now()))
    lane.timer.unref()
  }
  const send = async (logKey: string, lane: Lane): Promise<void> => {
    const request = lane.wanted
    lane.wanted = undefined
    lane.calling = true
    lane.lastCallMs = performance.now() // the window runs from a call's start: a slow sync does not widen it
    calls += 1
    try {
      const result = await call(logKey, { ...request, ...(lane.cursor ? { cursor: lane.cursor } : {}) })
      lane.watched = result.watched
      lane.cursor = result.cursor
    } catch (error) {
      options.onError?.(error)
    } finally {
      lane.calling = false
      schedule(logKey, lane)
    }
  }
  return {
    ring(logKey, state, laterMs = 0) {
      const lane = lanes.get(logKey) ?? { wanted: undefined, dueMs: Infinity, calling: false, timer: undefined, lastCallMs: -Infinity, watched: true }
      lanes.set(logKey, lane)
      const dueMs = performance.now() + laterMs
      const sooner = !lane.wanted || dueMs < lane.dueMs
      lane.wanted = { turns: Math.max(state.turns, lane.wanted?.turns ?? 0), runs: Math.max(state.runs, lane.wanted?.runs ?? 0) }
      if (sooner) lane.dueMs = dueMs
      const followedNow = !lane.watched && options.followed?.(logKey) === true
      if ((sooner || followedNow) && lane.timer !== undefined) { // its timer waits for a later time: set it again
        clearTimeout(lane.timer)
        lane.timer = undefined
      }
      schedule(logKey, lane)
    },
    covered(logKey, state) {
      const lane = lanes.get(logKey)
      if (!lane?.wanted || lane.wanted.turns > state.turns || lane.wanted.runs > state.runs) return
      lane.wanted = undefined
      clearTimeout(lane.timer)
      lane.timer = undefined
      schedule(logKey, lane)
    },
    idle() {
      if (!busy()) return Promise.resolve()
      return new Promise(resolve => idleWaiters.push(resolve))
    },
    calls: () => calls,
  }
}

/**
 * Calls `sync` over kept-alive connections with `node:http` (or `node:https`): a fraction of what `fetch` costs per
 * request in the services process, which also runs the agents. A call whose reused connection was reset (the ingress
 * had closed it) is made once more at once, on a connection of its own: a sync made twice is one sync.
 */
function createCaller(ingressUrl: string): (logKey: string, request: SyncEventsRequest) => Promise<SyncEventsResult> {
  const base = new URL(ingressUrl.replace(/\/$/, '') + '/')
  const transport = base.protocol === 'https:' ? https : http
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 16, timeout: FREE_SOCKET_TIMEOUT_MS })
  const callOnce = (url: URL, body: string, via: http.Agent | false): Promise<SyncEventsResult> => new Promise((resolve, reject) => {
    const outgoing = transport.request(url, { method: 'POST', agent: via, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const status = response.statusCode ?? 0
        const text = Buffer.concat(chunks).toString('utf8')
        if (status >= 200 && status < 300) resolve(syncResult(text))
        else reject(new Error(`${url.pathname} answered ${status}: ${text.slice(0, 200)}`))
      })
    })
    outgoing.setTimeout(CALL_IDLE_TIMEOUT_MS, () => outgoing.destroy(new Error(`${url.pathname} was silent for ${CALL_IDLE_TIMEOUT_MS} ms`)))
    outgoing.on('error', (error: NodeJS.ErrnoException) => reject(outgoing.reusedSocket && error.code === 'ECONNRESET' ? new StaleSocketError(error) : error))
    outgoing.end(body)
  })
  return async (logKey, request) => {
    const url = new URL(`${EVENTS_SERVICE}/${encodeURIComponent(logKey)}/sync`, base)
    const body = JSON.stringify(request)
    try {
      return await callOnce(url, body, agent)
    } catch (error) {
      if (!(error instanceof StaleSocketError)) throw error
      return callOnce(url, body, false) // a connection of its own: the pool may hold more that the ingress closed
    }
  }
}

/** The answer of `sync`; one that does not say whether the log is followed counts as followed (the safe side). */
function syncResult(text: string): SyncEventsResult {
  try {
    const body = JSON.parse(text) as Partial<SyncEventsResult>
    return { count: Number(body.count ?? 0), watched: body.watched !== false, ...(isCursor(body.cursor) ? { cursor: body.cursor } : {}) }
  } catch {
    return { count: 0, watched: true }
  }
}

/** Whether an answer's cursor has the shape of one (anything else is not passed on). */
function isCursor(value: unknown): value is EventCursor {
  const cursor = value as Partial<EventCursor> | null | undefined
  return typeof cursor?.turns === 'number' && typeof cursor.runs === 'number' && typeof cursor.from === 'number' && Array.isArray(cursor.open) && cursor.open.every(index => typeof index === 'number')
}

/** A reused kept-alive connection was reset before an answer came (most often the ingress had closed it). */
class StaleSocketError extends Error {
  constructor(cause: Error) {
    super(`a kept-alive connection to the ingress was closed: ${cause.message}`, { cause })
  }
}
