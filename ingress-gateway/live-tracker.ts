import type { LiveDelta, ModelDelta } from '../contract/live-delta'

/** `model:delta` as viewers get it: a piece of a model step in progress (the library's `model:delta` event data). */
export type ModelDeltaEvent = ModelDelta

/** `model:superseded`: the deltas of `attempt` for this run's `turn` are void; `nextAttempt`'s follow from offset 0. */
export interface ModelSupersededEvent {
  runId: string
  turn: number
  attempt: string
  nextAttempt: string
  label?: string
}

/** A live (non-durable) event, ready for SSE. */
export type LiveEvent = { type: 'model:delta'; data: ModelDeltaEvent } | { type: 'model:superseded'; data: ModelSupersededEvent }

interface RunProgress {
  turn: number
  attempt: string
  delivered: Record<ModelDeltaEvent['kind'], number>
  superseded: Set<string>
}

/**
 * Turns the deltas one viewer receives (from every services replica, across reconnects) into live events: a delta
 * of a new attempt for a turn first yields `model:superseded` for the earlier one; a delta already delivered (the hub
 * replays the attempt from its start on every reconnect) is dropped or trimmed to what is new; deltas of an attempt
 * already superseded, or of an earlier turn, are dropped.
 */
export function createLiveTracker(emit: (event: LiveEvent) => void): (delta: LiveDelta) => void {
  const runs = new Map<string, RunProgress>()
  return delta => {
    const key = `${delta.label ?? ''}\u0000${delta.runId}`
    const progress = progressFor(runs, key, delta, emit)
    if (progress === undefined) return
    const delivered = progress.delivered[delta.kind]
    const end = delta.offset + delta.text.length
    if (end <= delivered) return
    const skip = Math.max(0, delivered - delta.offset)
    progress.delivered[delta.kind] = Math.max(delivered, end)
    emit({ type: 'model:delta', data: toEvent(delta, skip) })
  }
}

function progressFor(runs: Map<string, RunProgress>, key: string, delta: LiveDelta, emit: (event: LiveEvent) => void): RunProgress | undefined {
  const known = runs.get(key)
  if (known === undefined || delta.turn > known.turn) {
    const fresh = { turn: delta.turn, attempt: delta.attempt, delivered: { text: 0, thinking: 0 }, superseded: new Set<string>() }
    runs.set(key, fresh)
    return fresh
  }
  if (delta.turn < known.turn || known.superseded.has(delta.attempt)) return undefined
  if (delta.attempt === known.attempt) return known
  emit({ type: 'model:superseded', data: { runId: delta.runId, turn: delta.turn, attempt: known.attempt, nextAttempt: delta.attempt, ...labelOf(delta) } })
  known.superseded.add(known.attempt)
  known.attempt = delta.attempt
  known.delivered = { text: 0, thinking: 0 }
  return known
}

function toEvent(delta: LiveDelta, skip: number): ModelDeltaEvent {
  return { runId: delta.runId, turn: delta.turn, attempt: delta.attempt, kind: delta.kind, offset: delta.offset + skip, text: delta.text.slice(skip), ...labelOf(delta) }
}

function labelOf(delta: LiveDelta): { label?: string } {
  return delta.label === undefined ? {} : { label: delta.label }
}
