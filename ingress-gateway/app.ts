import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify'
import { createAuth, type GatewayAuth } from './auth'
import { checkApiKeyLengths, DEFAULT_REQUEST_TIMEOUT_MS, GatewayConfigError, type GatewayConfig } from './config'
import { clientErrorHandler, GATEWAY_ERROR_CODES, installErrorHandlers, replyWithError } from './errors'
import { installJsonParser, installValidation } from './json-body'
import { createLiveDeltas, NO_LIVE_DELTAS, type LiveDeltas } from './live-deltas'
import { eventLogSource } from './event-log-source'
import { createRestateAdmin, type RestateAdmin } from './restate-admin'
import { PromptAdmissions } from './prompt-admissions'
import { connectIngress, MAX_HOLD_MS, type RestateIngress } from './restate-ingress'
import { SessionFeeds, type EventLogSource } from './session-feeds'
import { installCors } from './cors'
import { createRunTimeline } from './protocols/create-run-timeline'
import type { RunTimeline } from './protocols/run-timeline'
import { agUiRoutes } from './routes/ag-ui'
import { awakeableRoutes } from './routes/awakeables'
import { chatRoutes } from './routes/chat'
import { consoleRoutes } from './routes/console'
import { healthRoutes } from './routes/health'
import { sessionEventRoutes } from './routes/session-events'
import { sessionMessageRoutes } from './routes/session-messages'
import { sessionPromptRoutes } from './routes/session-prompts'
import { sessionRoutes } from './routes/sessions'
import { sessionListRoutes } from './routes/session-list'
import { createRateLimiter, DEFAULT_TENANT_LIMITS, type TenantLimits } from './tenant-limits'

/** What every route plugin receives from {@link buildGateway}. */
export interface RouteDependencies {
  config: GatewayConfig
  /** Restate's ingress (typed clients): every prompt, message, answer and read. */
  ingress: RestateIngress
  /** Restate's admin API: cancel and health only. */
  admin: RestateAdmin
  auth: GatewayAuth
  /** The per-tenant limits in force (defaults filled in). */
  limits: TenantLimits
  live: LiveDeltas
  /** The session event logs, and the feeds that share one watch per followed session among every reader of this gateway. */
  eventLog: { source: EventLogSource; feeds: SessionFeeds }
  /** The protocol-neutral session activity the chat protocols (AI SDK, AG-UI) map. */
  timeline: RunTimeline
  /** The admission of prompts: a tenant's prompts that arrive together are admitted in one call. */
  admissions: PromptAdmissions
}

/**
 * Builds the gateway (never listens; `server.ts` does). Throws {@link GatewayConfigError} when the config has no API keys
 * and is not in open mode. Restate is reached only through `config.restateIngressUrl` and `config.restateAdminUrl`.
 */
export async function buildGateway(config: GatewayConfig): Promise<FastifyInstance> {
  if (!config.open && config.apiKeys.length === 0) throw new GatewayConfigError('refusing to build the gateway without API keys (or open mode)')
  checkApiKeyLengths(config.apiKeys)
  const requestTimeoutMs = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const app = Fastify({
    logger: loggerOptions(config),
    // Fastify logs two lines per request (incoming, completed); the onResponse hook below logs one.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // fastify's default (100) would answer 414 to valid 128-character session ids.
    routerOptions: { maxParamLength: 1024 },
    requestTimeout: requestTimeoutMs,
    // Node checks request timeouts every connectionsCheckingInterval (30 s by default): check often enough to honour
    // short ones. A headersTimeout above requestTimeout (Node's 60 s default) would make Node use it for the body too.
    http: { headersTimeout: Math.min(requestTimeoutMs, 60_000), connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(requestTimeoutMs / 2))) },
    clientErrorHandler,
    frameworkErrors: replyWithError,
  })
  installErrorHandlers(app)
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) }, 'request')
  })
  installValidation(app)
  installJsonParser(app)
  app.decorateRequest('tenant', '')
  await registerOpenApi(app, config)
  const limits = { ...DEFAULT_TENANT_LIMITS, ...config.limits }
  const ingress = connectIngress(config.restateIngressUrl)
  const live = config.live ? createLiveDeltas(config.live) : NO_LIVE_DELTAS
  const source = eventLogSource(ingress)
  const eventLog = { source, feeds: new SessionFeeds(source, config.eventWatchMs ?? MAX_HOLD_MS) }
  installCors(app, config.corsOrigins ?? [])
  const dependencies: RouteDependencies = {
    config,
    ingress,
    admin: createRestateAdmin(config.restateAdminUrl, config.restateIngressUrl),
    auth: createAuth(config, createRateLimiter(limits)),
    limits,
    live,
    eventLog,
    timeline: createRunTimeline({ ingress, live, eventLog, config }),
    admissions: new PromptAdmissions(ingress),
  }
  for (const routes of [healthRoutes, sessionPromptRoutes, sessionMessageRoutes, sessionRoutes, sessionListRoutes, sessionEventRoutes, awakeableRoutes, chatRoutes, agUiRoutes, consoleRoutes]) {
    await app.register(routes, dependencies)
  }
  return app
}

/** Request logs keep method and URL but never an answer-link token (it authorizes an answer by itself). */
function loggerOptions(config: GatewayConfig) {
  if (config.logger !== true) return false
  const req = (request: FastifyRequest) => ({ method: request.method, url: redactToken(request.url), remoteAddress: request.ip })
  return { level: config.logLevel ?? 'info', serializers: { req } }
}

/** `url` with any `token` query parameter's value replaced by `REDACTED`, however its name is percent-encoded. */
export function redactToken(url: string): string {
  return url.replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, separator: string, name: string) => (decodedName(name) === 'token' ? `${separator}${name}=REDACTED` : whole))
}

/** A query parameter's name as the query parser reads it (`+` a space, percent escapes decoded); itself if malformed. */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '))
  } catch {
    return name
  }
}

async function registerOpenApi(app: FastifyInstance, config: GatewayConfig): Promise<void> {
  const codes = Object.entries(GATEWAY_ERROR_CODES).map(([code, { status }]) => `\`${code}\` (${status})`).join(', ')
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'zidane ingress gateway', version: '1.0.0', description: `Durable AI agent sessions on Restate. Errors are \`{ "error": { "code", "message" } }\` with codes ${codes}.` },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key from GATEWAY_API_KEYS.' } } },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
