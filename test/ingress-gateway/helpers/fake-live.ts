import type { LiveDeltas, LiveEvent } from '../../../ingress-gateway/live-deltas'

/** A live-delta source the test drives: `emit` reaches every subscriber; `subscribers()` counts them. */
export function fakeLive(): LiveDeltas & { emit(event: LiveEvent): void; subscribers(): number } {
  const listeners = new Set<(event: LiveEvent) => void>()
  return {
    subscribeLive: (_key, onEvent) => { listeners.add(onEvent); return () => listeners.delete(onEvent) },
    emit: event => { for (const listener of listeners) listener(event) },
    subscribers: () => listeners.size,
  }
}
