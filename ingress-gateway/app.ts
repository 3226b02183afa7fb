import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify'
import { createAuth } from './auth'
import { clientErrorHandler } from './client-errors'
import { checkApiKeyLengths, DEFAULT_REQUEST_TIMEOUT_MS, GatewayConfigError, type GatewayConfig } from './config'
import { GATEWAY_ERROR_CODES, GatewayError, installErrorHandlers, replyWithError, unsupportedMediaType } from './errors'
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth'
import { createLiveDeltas, NO_LIVE_DELTAS } from './live-deltas'
import { createRestateAdmin } from './restate-admin'
import { connectIngress } from './restate-ingress'
import { awakeableRoutes } from './routes/awakeables'
import { healthRoutes } from './routes/health'
import type { RouteDependencies } from './routes/route-dependencies'
import { sessionEventRoutes } from './routes/session-events'
import { sessionMessageRoutes } from './routes/session-messages'
import { sessionPromptRoutes } from './routes/session-prompts'
import { sessionRoutes } from './routes/sessions'
import { recordRoutes } from './route-table'
import { createRateLimiter, DEFAULT_TENANT_LIMITS } from './tenant-limits'
import { installValidation } from './validation'

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
    // Fastify logs two lines per request (incoming, completed); `logOneLinePerRequest` logs one.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // maxParamLength: fastify's default (100) would answer 414 to valid 128-character session ids.
    routerOptions: { maxParamLength: 1024 },
    requestTimeout: requestTimeoutMs,
    // Node checks request timeouts every connectionsCheckingInterval (30 s by default): check often enough to honour
    // short ones. A headersTimeout above requestTimeout (Node's 60 s default) would make Node use it for the body too.
    http: { headersTimeout: Math.min(requestTimeoutMs, 60_000), connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(requestTimeoutMs / 2))) },
    clientErrorHandler,
    frameworkErrors: replyWithError,
  })
  const routeTable = recordRoutes(app)
  logOneLinePerRequest(app)
  installValidation(app)
  installJsonParser(app)
  installErrorHandlers(app, routeTable)
  app.decorateRequest('tenant', '')
  await registerOpenApi(app, config)
  const limits = { ...DEFAULT_TENANT_LIMITS, ...config.limits }
  const dependencies: RouteDependencies = {
    config,
    ingress: connectIngress(config.restateIngressUrl),
    admin: createRestateAdmin(config.restateAdminUrl, config.restateIngressUrl),
    auth: createAuth(config, createRateLimiter(limits)),
    limits,
    live: config.live ? createLiveDeltas(config.live) : NO_LIVE_DELTAS,
  }
  for (const routes of [healthRoutes, sessionPromptRoutes, sessionMessageRoutes, sessionRoutes, sessionEventRoutes, awakeableRoutes]) {
    await app.register(routes, dependencies)
  }
  return app
}

/** One info line per answered request: method, URL (token redacted), status and time. */
function logOneLinePerRequest(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) }, 'request')
  })
}

/** Request logs keep method and URL but never an answer-link token (it authorizes an answer by itself). */
function loggerOptions(config: GatewayConfig) {
  if (config.logger !== true) return false
  return {
    level: config.logLevel ?? 'info',
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: redactToken(request.url), remoteAddress: request.ip }),
    },
  }
}

/**
 * `url` with the value of any `token` query parameter replaced by `REDACTED`, however its name is percent-encoded
 * (`%74oken` is decoded to `token` by the query parser, so it authorizes as well).
 */
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

/**
 * Only JSON bodies in UTF-8 are accepted: other types, and a `charset` other than `utf-8`, get 415; bytes that are not
 * valid UTF-8 get 400 (never replaced by U+FFFD). An empty or whitespace-only JSON body counts as no body, so bodiless
 * POSTs work with any client. Bodies nested deeper than {@link MAX_JSON_DEPTH} get 400: they could not be serialized
 * on to Restate. A `__proto__` (or `constructor.prototype`) key gets 400 saying so.
 */
function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = readableBody(request, body)
    if (text instanceof GatewayError) done(text, undefined)
    else if (JSON_WHITESPACE_ONLY.test(text)) done(null, undefined)
    else {
      void parseJson(request, text, (error, parsed: unknown) => {
        if (error !== null) done(isPlainJson(text) ? new GatewayError('invalid_request', POISONED_BODY) : error, undefined)
        else if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) done(new GatewayError('invalid_request', `body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined)
        else done(null, parsed)
      })
    }
  })
}

/** The body as text, or the error to answer: 415 for a charset other than UTF-8, 400 for bytes that are not UTF-8. */
function readableBody(request: FastifyRequest, body: Buffer | string): string | GatewayError {
  if (!declaresUtf8OrNoCharset(request.headers['content-type'])) return unsupportedMediaType(request)
  // Fastify hands a Buffer (`parseAs: 'buffer'`); a string is already decoded.
  if (typeof body === 'string') return body
  return decodeUtf8(body) ?? new GatewayError('invalid_request', 'body is not valid UTF-8')
}

/** What the secure parser refuses in JSON that is otherwise valid. */
const POISONED_BODY = 'body must not contain a "__proto__" or "constructor" key'

/** A body of JSON's insignificant whitespace only (space, tab, LF, CR), or none: treated as no body. */
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/

/** Decodes strictly: malformed UTF-8 throws instead of becoming U+FFFD. A leading BOM is dropped. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })

/** The body as text, or `undefined` when its bytes are not valid UTF-8. */
function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes)
  } catch {
    return undefined
  }
}

/** Whether `text` is valid JSON for `JSON.parse`: then the secure parser refused it for prototype poisoning. */
function isPlainJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * Whether a JSON content type's `charset` parameter, if any, is `utf-8` (in any case, quoted or not). Without one,
 * JSON is UTF-8 (RFC 8259).
 */
function declaresUtf8OrNoCharset(contentType: string | undefined): boolean {
  const parameters = (contentType ?? '').split(';').slice(1)
  return parameters.every((parameter) => {
    const separator = parameter.indexOf('=')
    if (separator === -1 || parameter.slice(0, separator).trim().toLowerCase() !== 'charset') return true
    return unquoted(parameter.slice(separator + 1).trim()).toLowerCase() === 'utf-8'
  })
}

/** A parameter value without the quotes of a quoted string (`"utf-8"` is `utf-8`). */
function unquoted(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value
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
