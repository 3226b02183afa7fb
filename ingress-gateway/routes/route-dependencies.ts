import type { GatewayAuth } from '../auth'
import type { GatewayConfig } from '../config'
import type { LiveDeltas } from '../live-deltas'
import type { RestateClient } from '../restate-client'
import type { RunAdmission } from '../run-admission'
import type { TenantLimits } from '../tenant-limits'

/** What every route plugin receives from `buildGateway`. */
export interface RouteDependencies {
  config: GatewayConfig
  restate: RestateClient
  auth: GatewayAuth
  /** The per-tenant limits in force (defaults filled in). */
  limits: TenantLimits
  /** Admits prompts and steering that start runs against the per-key cap of runs, and checks reused idempotency keys. */
  runs: RunAdmission
  /** The services' live deltas (`model:delta`, `model:superseded`) for the event stream. */
  live: LiveDeltas
}
