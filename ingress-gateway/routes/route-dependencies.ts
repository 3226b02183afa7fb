import type { GatewayAuth } from '../auth'
import type { GatewayConfig } from '../config'
import type { RestateClient } from '../restate-client'

/** What every route plugin receives from `buildGateway`. */
export interface RouteDependencies {
  config: GatewayConfig
  restate: RestateClient
  auth: GatewayAuth
}
