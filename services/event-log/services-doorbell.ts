import type { ServicesConfig } from '../config'
import { createEventDoorbell } from './event-doorbell'
import type { EventDoorbell } from './event-doorbell'

/**
 * The services' event doorbell, towards `ingressUrl`; `undefined` when that is unset (the logs then catch up at the
 * runs' journaled syncs: before a wait and at a run's end). One warning a minute while calls fail: their writes
 * still reach the log, at the next sync.
 */
export function servicesDoorbell(config: Pick<ServicesConfig, 'ingressUrl' | 'eventWindowMs'>): EventDoorbell | undefined {
  if (!config.ingressUrl) return undefined
  let failing = false
  return createEventDoorbell({
    ingressUrl: config.ingressUrl,
    windowMs: config.eventWindowMs,
    onError: (error) => {
      if (failing) return
      failing = true
      console.warn(`[events] a doorbell call failed (the run's next journaled sync brings its events): ${error instanceof Error ? error.message : String(error)}`)
      setTimeout(() => { failing = false }, 60_000).unref()
    },
  })
}
