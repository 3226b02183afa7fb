import { GatewayError } from './errors'
import { BUSY_RETRY_AFTER_SECONDS, type TenantLimits } from './tenant-limits'

/** The open streams of each API key in this gateway process, against `limits.maxEventStreams`. */
export interface StreamSlots {
  /** Takes a slot of `tenant` (429 `too_many_streams` when it holds the cap); the returned function frees it (once). */
  take(tenant: string): () => void
}

const slotsByLimits = new WeakMap<TenantLimits, StreamSlots>()

/**
 * The stream slots of the gateway whose `limits` these are: every streaming route of one gateway (event streams, chat
 * streams) gets the same counter from the `limits` object `buildGateway` hands them all, so the cap spans them.
 */
export function streamSlotsOf(limits: TenantLimits): StreamSlots {
  const known = slotsByLimits.get(limits)
  if (known !== undefined) return known
  const slots = createStreamSlots(limits)
  slotsByLimits.set(limits, slots)
  return slots
}

function createStreamSlots(limits: TenantLimits): StreamSlots {
  const open = new Map<string, number>()
  return {
    take(tenant) {
      const held = open.get(tenant) ?? 0
      if (held >= limits.maxEventStreams) throw new GatewayError('too_many_streams', `this API key already has ${limits.maxEventStreams} event streams open`, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS })
      open.set(tenant, held + 1)
      let freed = false
      return () => {
        if (freed) return
        freed = true
        const left = (open.get(tenant) ?? 1) - 1
        if (left > 0) open.set(tenant, left)
        else open.delete(tenant)
      }
    },
  }
}
