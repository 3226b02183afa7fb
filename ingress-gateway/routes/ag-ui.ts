import type { FastifyPluginAsync } from 'fastify'
import type { RouteDependencies } from '../app'

/** The AG-UI endpoint: being built. */
export const agUiRoutes: FastifyPluginAsync<RouteDependencies> = async () => {}
