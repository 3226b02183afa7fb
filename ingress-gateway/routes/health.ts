import type { FastifyPluginAsync } from 'fastify'
import type { RouteDependencies } from '../app'
import { errorResponseSchema, GatewayError } from '../errors'

const SHELL_MODES = ['sandboxed', 'unsandboxed', 'disabled'] as const

/** `GET /healthz` (the process is up) and `GET /readyz` (Restate admin and ingress answer; how `shell` runs). No auth. */
export const healthRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { admin }) => {
  const status = (value: string) => ({ type: 'object', required: ['status'], properties: { status: { type: 'string', enum: [value] } } }) as const
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['health'], response: { 200: status('ok') } } }, async () => ({ status: 'ok' as const }))
  const shellSchema = { type: 'object', required: ['mode', 'reason'], properties: { mode: { type: 'string', enum: SHELL_MODES }, reason: { type: 'string' } } }
  const ready = status('ready')
  const readySchema = { ...ready, properties: { ...ready.properties, shell: shellSchema } }
  app.get('/readyz', { schema: { summary: 'Readiness: Restate admin API and ingress respond', tags: ['health'], response: { 200: readySchema, 503: errorResponseSchema } } }, async () => {
    const health = await admin.health()
    const down = [health.admin ? undefined : 'admin API', health.ingress ? undefined : 'ingress'].filter((part) => part !== undefined)
    if (down.length > 0) throw new GatewayError('restate_unavailable', `Restate ${down.join(' and ')} not responding`)
    const shell = readShellStatus()
    return shell ? { status: 'ready' as const, shell } : { status: 'ready' as const }
  })
}

/** How the services run the `shell` tool, as `npm start` passes it (`ZIDANE_SHELL_STATUS`); undefined when unset or invalid. */
function readShellStatus(): { mode: string; reason: string } | undefined {
  try {
    const parsed = JSON.parse(process.env.ZIDANE_SHELL_STATUS ?? '') as { mode?: unknown; reason?: unknown }
    const { mode, reason } = parsed
    return typeof reason === 'string' && typeof mode === 'string' && (SHELL_MODES as readonly string[]).includes(mode) ? { mode, reason } : undefined
  } catch {
    return undefined
  }
}
