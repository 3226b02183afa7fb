import { randomBytes } from 'node:crypto'
import type { ModelDelta } from '../providers/provider'

/** A streamed delta of one model request attempt, placed within that attempt. */
export interface AttemptDelta extends ModelDelta {
  /**
   * Unique per execution of a model request (each retry and each re-run after a crash gets a new one). Not journaled:
   * a per-process nonce and a counter, so two processes never hand out the same id.
   */
  attempt: string
  /** Characters of this `kind` the attempt streamed before this delta (all blocks of the kind together). */
  offset: number
}

/** Drawn once per process; only ever leaves the process inside live deltas, never in a journal or in state. */
const PROCESS_NONCE = randomBytes(6).toString('base64url')
let attemptCounter = 0

/** A new attempt id: `<process nonce>-<counter>`. */
export function nextAttemptId(): string {
  attemptCounter += 1
  return `${PROCESS_NONCE}-${attemptCounter}`
}

/**
 * Wraps `onDelta` for one attempt: each delta it forwards carries a fresh attempt id and its offset within the
 * attempt's text of its kind.
 */
export function attemptDeltaSink(onDelta: (delta: AttemptDelta) => void, attempt: string = nextAttemptId()): (delta: ModelDelta) => void {
  const offsets: Record<ModelDelta['kind'], number> = { text: 0, thinking: 0, tool_input: 0 }
  return delta => {
    const offset = offsets[delta.kind]
    offsets[delta.kind] = offset + delta.delta.length
    onDelta({ ...delta, attempt, offset })
  }
}
