import { loadServicesConfig } from '../config'
import { createEventCourier } from './event-courier'
import type { EventCourier } from './event-courier'

let courier: EventCourier | null | undefined

/**
 * The services process's one event courier, towards `RESTATE_INGRESS_URL`; `undefined` when that is unset (events
 * then reach the log through the outboxes' journaled batches alone). One warning a minute while batches fail: their
 * events still arrive, journaled.
 */
export function processEventCourier(): EventCourier | undefined {
  if (courier !== undefined) return courier ?? undefined
  const config = loadServicesConfig()
  let failing = false
  courier = config.ingressUrl
    ? createEventCourier({
        ingressUrl: config.ingressUrl,
        windowMs: config.eventWindowMs,
        onError: (error) => {
          if (failing) return
          failing = true
          console.warn(`[events] a courier batch failed (the journaled send brings its events): ${error instanceof Error ? error.message : String(error)}`)
          setTimeout(() => { failing = false }, 60_000).unref()
        },
      })
    : null
  return courier ?? undefined
}
