import type { FastifyPluginAsync } from 'fastify'
import { errorResponseSchema, GatewayError } from '../errors'
import { readShellStatus, shellStatusSchema } from '../shell-status'
import type { RouteDependencies } from './route-dependencies'

/** `GET /healthz` (the process is up) and `GET /readyz` (Restate admin and ingress answer; how `shell` runs). No auth. */
export const healthRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { admin }) => {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', tags: ['health'], response: { 200: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } } } },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: Restate admin API and ingress respond',
        tags: ['health'],
        response: {
          200: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ready'] }, shell: shellStatusSchema } },
          503: errorResponseSchema,
        },
      },
    },
    async () => {
      const health = await admin.health()
      const down = [health.admin ? undefined : 'admin API', health.ingress ? undefined : 'ingress'].filter((part) => part !== undefined)
      if (down.length > 0) throw new GatewayError('restate_unavailable', `Restate ${down.join(' and ')} not responding`)
      const shell = readShellStatus()
      return shell ? { status: 'ready' as const, shell } : { status: 'ready' as const }
    },
  )
}
