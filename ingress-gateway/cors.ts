import type { FastifyInstance } from 'fastify'

/** Placeholder until the CORS allow-list lands: no cross-origin access. */
export function installCors(_app: FastifyInstance, _origins: readonly string[]): void {}
