import type { FastifyPluginAsync } from 'fastify'
import type { RouteDependencies } from '../app'

/** The AI SDK UI message stream routes (`useChat`): being built. */
export const chatRoutes: FastifyPluginAsync<RouteDependencies> = async () => {}
