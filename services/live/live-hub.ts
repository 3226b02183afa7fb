import type { LiveDelta } from '../../contract/live-delta'

/** Where the deltas of one model request come from: a session's own run, or one of its children (by label). */
export interface LiveSource {
  sessionKey: string
  label?: string
}

/** Receives a session's deltas: first the buffered ones of the attempts in progress, then live ones. */
export type LiveListener = (delta: LiveDelta) => void

/** The deltas of the attempt in progress of one run (the session's or a child's). */
interface AttemptBuffer {
  turn: number
  attempt: string
  deltas: LiveDelta[]
  /** What the buffered deltas hold, as {@link bufferedBytesOf} counts it. */
  bytes: number
  /** `performance.now()` of its latest delta (never journaled: the hub is in-memory only). */
  lastDeltaMs: number
}

/** A buffer that got no delta this long belongs to an attempt that ended without telling (its invocation moved away). */
const STALE_BUFFER_MS = 10 * 60_000

/**
 * Past this many bytes an attempt's buffer keeps streaming but stops buffering (a late viewer waits for `turn:end`).
 * Each delta counts its text and its object, so many tiny deltas are bounded like a few large ones.
 */
export const MAX_BUFFERED_BYTES = 2 * 1024 * 1024
/** What a buffered delta costs besides its text: the object, its fields and the text's header (about, on 64-bit V8). */
const DELTA_OVERHEAD_BYTES = 96

function bufferedBytesOf(delta: LiveDelta): number {
  return delta.text.length + DELTA_OVERHEAD_BYTES
}

/**
 * The services' live hub: per session key, the deltas of the model step attempts in progress (the session's own and
 * its children's), and the viewers following the session. In memory and per process: a killed process loses its
 * buffers, and the new attempt in the next process supersedes them.
 */
export interface LiveHub {
  /** Buffers `delta` as part of its run's current attempt (a new attempt id replaces the buffer) and sends it to the session's listeners. */
  publish(delta: LiveDelta): void
  /** Drops the buffer of run `runId` of `sessionKey` when it holds turn `turn` (its model step ended), or any turn when `turn` is left out (the run ended). */
  endStep(sessionKey: string, runId: string, turn?: number): void
  /** Calls `listener` with the buffered deltas of `sessionKey`, oldest first, then with each new one; returns the unsubscribe. */
  subscribe(sessionKey: string, listener: LiveListener): () => void
  /** Whether a viewer follows `sessionKey` here now (the event doorbell then rings its log at once). */
  followed(sessionKey: string): boolean
  /** How many sessions have a buffer or a listener (for tests and figures). */
  size(): number
}

/** Creates an empty hub; `nowMs` is its clock (for dropping stale buffers). */
export function createLiveHub(nowMs: () => number = () => performance.now()): LiveHub {
  const buffers = new Map<string, Map<string, AttemptBuffer>>()
  const listeners = new Map<string, Set<LiveListener>>()
  let sweptMs = nowMs()
  return {
    publish(delta) {
      const now = nowMs()
      if (now - sweptMs > STALE_BUFFER_MS / 10) {
        sweptMs = now
        dropStale(buffers, now)
      }
      bufferDelta(buffers, delta, now)
      for (const listener of listeners.get(delta.sessionKey) ?? []) callSafely(listener, delta)
    },
    endStep(sessionKey, runId, turn) {
      const runs = buffers.get(sessionKey)
      const buffer = runs?.get(runId)
      if (!runs || !buffer || (turn !== undefined && buffer.turn !== turn)) return
      runs.delete(runId)
      if (runs.size === 0) buffers.delete(sessionKey)
    },
    subscribe(sessionKey, listener) {
      for (const buffer of buffers.get(sessionKey)?.values() ?? []) for (const delta of buffer.deltas) callSafely(listener, delta)
      const set = listeners.get(sessionKey) ?? new Set<LiveListener>()
      set.add(listener)
      listeners.set(sessionKey, set)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(sessionKey) === set) listeners.delete(sessionKey)
      }
    },
    followed: sessionKey => listeners.has(sessionKey),
    size: () => new Set([...buffers.keys(), ...listeners.keys()]).size,
  }
}

function dropStale(buffers: Map<string, Map<string, AttemptBuffer>>, now: number): void {
  for (const [sessionKey, runs] of buffers) {
    for (const [runId, buffer] of runs) if (now - buffer.lastDeltaMs > STALE_BUFFER_MS) runs.delete(runId)
    if (runs.size === 0) buffers.delete(sessionKey)
  }
}

function bufferDelta(buffers: Map<string, Map<string, AttemptBuffer>>, delta: LiveDelta, now: number): void {
  const runs = buffers.get(delta.sessionKey) ?? new Map<string, AttemptBuffer>()
  buffers.set(delta.sessionKey, runs)
  let buffer = runs.get(delta.runId)
  if (buffer?.attempt !== delta.attempt) {
    buffer = { turn: delta.turn, attempt: delta.attempt, deltas: [], bytes: 0, lastDeltaMs: now }
    runs.set(delta.runId, buffer)
  }
  buffer.lastDeltaMs = now
  const bytes = bufferedBytesOf(delta)
  if (buffer.bytes + bytes > MAX_BUFFERED_BYTES) return
  buffer.deltas.push(delta)
  buffer.bytes += bytes
}

/** A viewer that fails never reaches the agent: a throwing `model:delta` hook would fail the run. */
function callSafely(listener: LiveListener, delta: LiveDelta): void {
  try {
    listener(delta)
  } catch {
    // The listener's own connection handling reports and closes it.
  }
}
