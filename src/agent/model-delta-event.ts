import type { AttemptDelta } from './model-attempt'

/**
 * What a `model:delta` event carries wherever it goes (the deployment's SSE stream, the CLI's `--stream-json`): the
 * run and turn, the request attempt, the block kind, where `text` starts within the attempt's text of that kind, and
 * the child's label for a sub-agent's delta. Not durable: no `seq`, and the journaled `turn:end` is authoritative.
 */
export interface ModelDeltaEventData {
  runId: string
  turn: number
  attempt: string
  kind: 'text' | 'thinking'
  offset: number
  text: string
  label?: string
}

/** A live delta in the session events' envelope (`{ type, data }`, without `seq` and `at`). */
export interface ModelDeltaEvent {
  type: 'model:delta'
  data: ModelDeltaEventData
}

/**
 * The `model:delta` event of a `model:delta` hook call (with `label` for a sub-agent), or undefined for a tool-input
 * delta, which only the final `tool:start` reports.
 */
export function modelDeltaEvent(event: { runId: string; turn: number; delta: AttemptDelta }, label?: string): ModelDeltaEvent | undefined {
  const { delta } = event
  if (delta.kind === 'tool_input') return undefined
  const data: ModelDeltaEventData = { runId: event.runId, turn: event.turn, attempt: delta.attempt, kind: delta.kind, offset: delta.offset, text: delta.delta }
  return { type: 'model:delta', data: label === undefined ? data : { ...data, label } }
}
