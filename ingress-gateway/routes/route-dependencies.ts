import type { GatewayAuth } from '../auth'
import type { GatewayConfig } from '../config'
import type { LiveDeltas } from '../live-deltas'
import type { RestateAdmin } from '../restate-admin'
import type { RestateIngress } from '../restate-ingress'
import type { TenantLimits } from '../tenant-limits'

/** What every route plugin receives from `buildGateway`. */
export interface RouteDependencies {
  config: GatewayConfig
  /** Restate's ingress (typed clients): every prompt, message, answer and read. */
  ingress: RestateIngress
  /** Restate's admin API: cancel and health only. */
  admin: RestateAdmin
  auth: GatewayAuth
  /** The per-tenant limits in force (defaults filled in). */
  limits: TenantLimits
  /** The services' live deltas (`model:delta`, `model:superseded`) for the event stream. */
  live: LiveDeltas
}
