import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { createAuth } from './auth'
import { GatewayConfigError, type GatewayConfig } from './config'
import { GATEWAY_ERROR_CODES, installErrorHandlers } from './errors'
import { createRestateClient } from './restate-client'
import { awakeableRoutes } from './routes/awakeables'
import { healthRoutes } from './routes/health'
import type { RouteDependencies } from './routes/route-dependencies'
import { sessionEventRoutes } from './routes/session-events'
import { sessionPromptRoutes } from './routes/session-prompts'
import { sessionRoutes } from './routes/sessions'
import { installValidation } from './validation'

/**
 * Builds the gateway (never listens; `server.ts` does). Throws {@link GatewayConfigError} when the config has no API keys
 * and is not in open mode. Restate is reached only through `config.restateIngressUrl` and `config.restateAdminUrl`.
 */
export async function buildGateway(config: GatewayConfig): Promise<FastifyInstance> {
  if (!config.open && config.apiKeys.length === 0) throw new GatewayConfigError('refusing to build the gateway without API keys (or open mode)')
  // maxParamLength: fastify's default (100) would answer 414 to valid 128-character session ids.
  const app = Fastify({ logger: loggerOptions(config), bodyLimit: config.bodyLimitBytes, routerOptions: { maxParamLength: 1024 } })
  installValidation(app)
  installJsonParser(app)
  installErrorHandlers(app)
  app.decorateRequest('tenant', '')
  await registerOpenApi(app, config)
  const dependencies: RouteDependencies = {
    config,
    restate: createRestateClient({ ingressUrl: config.restateIngressUrl, adminUrl: config.restateAdminUrl }),
    auth: createAuth(config),
  }
  for (const routes of [healthRoutes, sessionPromptRoutes, sessionRoutes, sessionEventRoutes, awakeableRoutes]) {
    await app.register(routes, dependencies)
  }
  return app
}

/** Request logs keep method and URL but never an answer-link token (it authorizes an answer by itself). */
function loggerOptions(config: GatewayConfig) {
  if (config.logger !== true) return false
  return {
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: redactToken(request.url), remoteAddress: request.ip }),
    },
  }
}

/** `url` with the value of any `token` query parameter replaced by `REDACTED`. */
export function redactToken(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/g, '$1REDACTED')
}

/** Only JSON bodies are accepted (others get 415); an empty JSON body counts as no body, so bodiless POSTs work with any client. */
function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text === '') {
      done(null, undefined)
      return
    }
    void parseJson(request, text, done)
  })
}

async function registerOpenApi(app: FastifyInstance, config: GatewayConfig): Promise<void> {
  const codes = Object.entries(GATEWAY_ERROR_CODES).map(([code, { status }]) => `\`${code}\` (${status})`).join(', ')
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'zidane ingress gateway',
        version: '1.0.0',
        description: `Durable AI agent sessions on Restate. Errors are \`{ "error": { "code", "message" } }\` with codes ${codes}.`,
      },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key from GATEWAY_API_KEYS.' } } },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
