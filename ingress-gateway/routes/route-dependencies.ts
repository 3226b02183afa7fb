import type { GatewayAuth } from '../auth'
import type { GatewayConfig } from '../config'
import type { LiveDeltas } from '../live-deltas'
import type { RestateClient } from '../restate-client'
import type { TenantCounter, TenantLimits } from '../tenant-limits'

/** What every route plugin receives from `buildGateway`. */
export interface RouteDependencies {
  config: GatewayConfig
  restate: RestateClient
  auth: GatewayAuth
  /** The per-tenant limits in force (defaults filled in). */
  limits: TenantLimits
  /** Prompt sends in flight per tenant: counted with Restate's unfinished invocations, so a burst cannot overshoot. */
  sendsInFlight: TenantCounter
  /** The services' live deltas (`model:delta`, `model:superseded`) for the event stream. */
  live: LiveDeltas
}
