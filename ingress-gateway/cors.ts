import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from './errors'

/** Methods a browser page may use cross-origin. */
const ALLOWED_METHODS = 'GET, HEAD, POST'
/** Request headers a page may send: the API key, JSON bodies, idempotency keys, event-stream resumption. */
const ALLOWED_HEADERS = 'authorization, content-type, idempotency-key, last-event-id'
/** Response headers a page may read: the AI SDK's stream marker and the limits' retry delay. */
const EXPOSED_HEADERS = 'x-vercel-ai-ui-message-stream, retry-after'
/** How long a browser may cache a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * Lets the browser pages of `origins` (exact origins, as `GATEWAY_CORS_ORIGINS` lists them) call the API: a preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) from one is answered 204 with the methods and headers allowed, from
 * any other origin 403 `origin_not_allowed`; their requests get `Access-Control-Allow-Origin`. With no origins, no
 * response carries a CORS header (browsers then refuse every cross-origin call). Call it before any route is added.
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  const allowed = new Set(origins.map(origin => URL.parse(origin)?.origin ?? origin))
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const { origin } = request.headers
    if (isPreflight(request)) {
      if (origin === undefined || !allowed.has(origin)) throw new GatewayError('origin_not_allowed', `origin ${origin ?? '(none)'} may not call this API from a browser`)
      allowOrigin(reply.raw, origin)
      return reply.status(204).headers({
        'access-control-allow-methods': ALLOWED_METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      }).send()
    }
    if (origin !== undefined && allowed.has(origin)) {
      allowOrigin(reply.raw, origin)
      reply.raw.setHeader('access-control-expose-headers', EXPOSED_HEADERS)
    } else if (allowed.size > 0) {
      // The answer depends on the origin: caches must not hand one origin's answer to another.
      reply.raw.setHeader('vary', 'origin')
    }
    return undefined
  })
}

function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
}

/**
 * Set on the raw response, so that streams written with `writeHead` after `reply.hijack()` carry them too (Node merges
 * headers set with `setHeader` into `writeHead`'s).
 */
function allowOrigin(raw: ServerResponse, origin: string): void {
  raw.setHeader('access-control-allow-origin', origin)
  raw.setHeader('vary', 'origin')
}
