import { loadServicesConfig } from '../config'
import { createEventDoorbell } from './event-doorbell'
import type { EventDoorbell } from './event-doorbell'

let doorbell: EventDoorbell | null | undefined

/**
 * The services process's one event doorbell, towards `RESTATE_INGRESS_URL`; `undefined` when that is unset (the logs
 * then catch up at the runs' journaled syncs: before a wait and at a run's end). One warning a minute while calls
 * fail: their writes still reach the log, at the next sync.
 */
export function processEventDoorbell(): EventDoorbell | undefined {
  if (doorbell !== undefined) return doorbell ?? undefined
  const config = loadServicesConfig()
  let failing = false
  doorbell = config.ingressUrl
    ? createEventDoorbell({
        ingressUrl: config.ingressUrl,
        windowMs: config.eventWindowMs,
        onError: (error) => {
          if (failing) return
          failing = true
          console.warn(`[events] a doorbell call failed (the run's next journaled sync brings its events): ${error instanceof Error ? error.message : String(error)}`)
          setTimeout(() => { failing = false }, 60_000).unref()
        },
      })
    : null
  return doorbell ?? undefined
}
