/** The bench drives many sessions with one API key: the per-key gateway limits must not shape what it measures. */
export const UNLIMITED_GATEWAY = { GATEWAY_RATE_PER_SECOND: '1000000', GATEWAY_RATE_BURST: '1000000', GATEWAY_MAX_CONCURRENT_RUNS: '1000000', GATEWAY_MAX_EVENT_STREAMS: '1000000' }

/** A turn as `GET /v1/sessions/{id}` returns it, as far as turn timing needs. */
export interface TurnView { role: string; createdAt: number }

/** Per-turn times of one session: from its user turn to each assistant turn, then turn to turn (journaled timestamps). */
export function turnTimes(turns: readonly TurnView[]): number[] {
  const times: number[] = []
  let previous = turns.find(turn => turn.role === 'user')?.createdAt
  for (const turn of turns) {
    if (turn.role !== 'assistant' || previous === undefined) continue
    times.push(turn.createdAt - previous)
    previous = turn.createdAt
  }
  return times
}
