import type { GatewayConfig } from '../config'
import type { LiveDeltas } from '../live-deltas'
import type { RestateIngress } from '../restate-ingress'
import type { RunTimeline } from './run-timeline'

/** What the timeline reads: Restate's ingress (event log, session view), the live deltas, and the answer-link settings. */
export interface RunTimelineDependencies {
  ingress: RestateIngress
  live: LiveDeltas
  config: Pick<GatewayConfig, 'publicUrl' | 'answerSecret' | 'eventWatchMs'>
}

/** Builds the gateway's {@link RunTimeline}. Being built: throws until then. */
export function createRunTimeline(_dependencies: RunTimelineDependencies): RunTimeline {
  const missing = (): never => { throw new Error('run timeline not built yet') }
  return { follow: missing, eventCount: missing, latestRun: missing }
}
