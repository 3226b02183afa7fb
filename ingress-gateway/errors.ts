import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * Every error the gateway answers with: a stable code, its HTTP status and what it means. Codes are permanent (clients
 * branch on them); `ERRORS.md` documents the same list and a test keeps the two in sync.
 */
export const GATEWAY_ERROR_CODES = {
  invalid_request: { status: 400, description: 'The request does not match the route schema (body, params, query or headers), or the body is not valid UTF-8 or not valid JSON, or has a `__proto__` or `constructor` key. The message names the field.' },
  unknown_model: { status: 400, description: 'The prompt names a `model` the deployment does not serve (`provider:model`, or a bare model of the default provider; see docs/providers.md). The message lists the known ones.' },
  unauthorized: { status: 401, description: 'The `Authorization: Bearer <key>` header is missing, malformed, or carries a key the gateway does not know.' },
  bad_token: { status: 403, description: 'The `token` of an answer link does not match the question id.' },
  origin_not_allowed: { status: 403, description: 'A CORS preflight (`OPTIONS`) came from an origin that `GATEWAY_CORS_ORIGINS` does not list.' },
  route_not_found: { status: 404, description: 'No route matches the path (or a path segment is `.`/`..`).' },
  session_not_found: { status: 404, description: 'The session does not exist for this API key (sessions of other keys are invisible).' },
  question_not_found: { status: 404, description: 'No pending question has this id, or it belongs to another API key.' },
  method_not_allowed: { status: 405, description: 'The path exists but not with this method; the `Allow` header lists the methods it takes.' },
  request_timeout: { status: 408, description: 'The request (headers and body) did not arrive within `GATEWAY_REQUEST_TIMEOUT_MS` (default 30 s); the connection is closed.' },
  nothing_running: { status: 409, description: 'Cancel was asked but the session has no running invocation.' },
  already_answered: { status: 409, description: 'The question was answered before; the first answer stands.' },
  run_cancelled: { status: 409, description: 'The run awaited with `?wait=true` was cancelled before it finished.' },
  approval_not_pending: { status: 409, description: 'A chat request carried a `tool-approval-response` for an approval the session does not list as pending (answered before, closed, never asked, or not an approval).' },
  run_active: { status: 409, description: 'The session has a run in progress. An AG-UI run asked for: answer its interrupt (`resume`), steer it (`forwardedProps.mode: "steer"`) or wait for it to end. A `DELETE` without `cancel=true`: cancel the run first, or delete with `cancel=true`.' },
  question_closed: { status: 409, description: 'The run that asked the question ended (finished, failed or cancelled) before it was answered; the answer was not delivered. The message names the reason.' },
  question_expired: { status: 410, description: 'The question expired before it was answered.' },
  payload_too_large: { status: 413, description: 'The request body is over the limit (`GATEWAY_BODY_LIMIT_BYTES`, default 1 MiB).' },
  unsupported_media_type: { status: 415, description: 'The request body is not `application/json`, or declares a charset other than `utf-8`.' },
  idempotency_key_reused: { status: 422, description: 'The `Idempotency-Key` was sent before to this route of the session with another body; the first request stands. Use a new key for a new request.' },
  rate_limited: { status: 429, description: 'The API key sent more requests than its rate allows (`GATEWAY_RATE_PER_SECOND`, burst `GATEWAY_RATE_BURST`); `Retry-After` says when a request is allowed again.' },
  too_many_runs: { status: 429, description: 'The API key already has `GATEWAY_MAX_CONCURRENT_RUNS` runs running or queued, and the request would start one (a prompt, or a message to a session with no run); `Retry-After` suggests when to try again.' },
  too_many_streams: { status: 429, description: 'The API key already has `GATEWAY_MAX_EVENT_STREAMS` event streams open; close one, or retry after `Retry-After`.' },
  headers_too_large: { status: 431, description: 'The request headers are larger than the server accepts.' },
  internal_error: { status: 500, description: 'An unexpected error in the gateway. The message is generic; details are in the gateway log.' },
  restate_error: { status: 502, description: 'Restate answered with an unexpected error (for example a service that is not registered); the message carries its status and text.' },
  restate_unavailable: { status: 503, description: 'Restate (ingress or admin API) cannot be reached or timed out.' },
} as const satisfies Record<string, { status: number; description: string }>

/** A stable gateway error code, one of {@link GATEWAY_ERROR_CODES}. */
export type GatewayErrorCode = keyof typeof GATEWAY_ERROR_CODES

/** An error the gateway answers with as `{ error: { code, message } }` and the code's status. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError'
  readonly statusCode: number
  /** Sent as `Retry-After` (seconds) with the response, for limits. */
  readonly retryAfterSeconds: number | undefined

  constructor(readonly code: GatewayErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options)
    this.statusCode = GATEWAY_ERROR_CODES[code].status
    this.retryAfterSeconds = options?.retryAfterSeconds
  }
}

/** Restate answered with an error status: `status` (an invocation's terminal error code), `source` (`invocation` when the handler failed). */
export class RestateCallError extends Error {
  override readonly name = 'RestateCallError'

  constructor(readonly status: number, message: string, readonly source?: string) {
    super(message)
  }
}

/** The JSON body of every error response. */
export interface ErrorBody { error: { code: GatewayErrorCode; message: string } }

/** Fastify's own error codes that are the client's fault, and the gateway code each becomes. */
const FASTIFY_CODES: Partial<Record<string, GatewayErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large', FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request', FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request', FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request', FST_ERR_MAX_PARAM_LENGTH: 'invalid_request', FST_ERR_ASYNC_CONSTRAINT: 'invalid_request',
}

/** The gateway code of a 4xx some plugin raised with only a status (a static file plugin's 403, …): it stays a 4xx. */
const CLIENT_STATUS_CODES: Partial<Record<number, GatewayErrorCode>> = {
  401: 'unauthorized', 404: 'route_not_found', 405: 'method_not_allowed', 408: 'request_timeout',
  413: 'payload_too_large', 415: 'unsupported_media_type', 429: 'rate_limited', 431: 'headers_too_large',
}

/** A precise one-line message for a schema violation, naming the field: `body.prompt must be string`. */
export function describeValidation(context: string, issue: { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string | undefined }): string {
  const path = [context, ...issue.instancePath.split('/').filter((part) => part !== '')].join('.')
  const { params } = issue
  if (issue.keyword === 'required') return `${path}.${String(params.missingProperty)} is required`
  if (issue.keyword === 'additionalProperties') return `${path}.${String(params.additionalProperty)} is not allowed`
  if (issue.keyword === 'false schema') return `${path} is not allowed here`
  return `${path} ${issue.message ?? 'is invalid'}`
}

function toGatewayError(error: FastifyError | GatewayError | RestateCallError, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error
  if (error instanceof RestateCallError) return new GatewayError('restate_error', `Restate answered ${error.status}: ${error.message}`)
  const [issue] = error.validation ?? []
  if (issue !== undefined) return new GatewayError('invalid_request', describeValidation(error.validationContext ?? 'request', issue))
  const mapped = FASTIFY_CODES[error.code]
  if (mapped === 'unsupported_media_type') return unsupportedMediaType(request)
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new GatewayError('invalid_request', 'body is not valid JSON')
  if (mapped !== undefined) return new GatewayError(mapped, error.message)
  const status = error.statusCode ?? 500
  if (status < 400 || status > 499) return new GatewayError('internal_error', 'internal error')
  return new GatewayError(CLIENT_STATUS_CODES[status] ?? 'invalid_request', `the request was refused (${status})`)
}

/** 415 `unsupported_media_type` for the request's content type (a type other than JSON, or a charset other than UTF-8). */
export function unsupportedMediaType(request: FastifyRequest): GatewayError {
  return new GatewayError('unsupported_media_type', `content-type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`)
}

/** Answers `error` as `{ error: { code, message } }`: the error handler, and fastify's `frameworkErrors` (before any route). */
export function replyWithError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = toGatewayError(error, request)
  if (mapped.code === 'internal_error') request.log.error({ err: error }, 'unhandled gateway error')
  else if (mapped.statusCode >= 500) request.log.warn({ code: mapped.code, message: mapped.message }, 'upstream error')
  if (mapped.code === 'unauthorized') void reply.header('www-authenticate', 'Bearer')
  if (mapped.retryAfterSeconds !== undefined) void reply.header('retry-after', String(mapped.retryAfterSeconds))
  return reply.status(mapped.statusCode).send(errorBody(mapped.code, mapped.message))
}

function errorBody(code: GatewayErrorCode, message: string): ErrorBody {
  return { error: { code, message } }
}

/**
 * Installs the error and not-found handlers (call it before any route is added): a path some route serves with other
 * methods gets 405 `method_not_allowed` with `Allow`, any other 404 `route_not_found`.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>()
  app.addHook('onRoute', (route) => {
    const entry = routes.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() }
    for (const method of [route.method].flat()) entry.methods.add(method)
    routes.set(route.url, entry)
  })
  app.setErrorHandler(replyWithError)
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? ''
    const allowed = [...new Set([...routes.values()].filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => [...methods]))].sort()
    if (allowed.length === 0 || allowed.includes(request.method)) return reply.status(404).send(errorBody('route_not_found', `no route ${request.method} ${path}`))
    return reply.status(405).header('allow', allowed.join(', ')).send(errorBody('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`))
  })
}

/** `/v1/sessions/:sessionId` → `^/v1/sessions/[^/]+$`; a trailing `*` matches the rest of the path. */
function patternOf(url: string): RegExp {
  const segments = url.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
  return new RegExp(`^${segments.join('/')}$`)
}

/** Node's HTTP parser and timeout errors, and the gateway code each is answered with. */
const CLIENT_ERRORS: Partial<Record<string, { code: GatewayErrorCode; message: string; reason: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', message: 'the request did not arrive in time', reason: 'Request Timeout' },
  HPE_HEADER_OVERFLOW: { code: 'headers_too_large', message: 'the request headers are too large', reason: 'Request Header Fields Too Large' },
}

/** Fastify's `clientErrorHandler`: a request Node could not parse, or that did not arrive in time, still gets an error body. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (!socket.writable) return void socket.destroy(error)
  const { code, message, reason } = CLIENT_ERRORS[error.code ?? ''] ?? { code: 'invalid_request', message: `malformed HTTP request (${error.code ?? 'parse error'})`, reason: 'Bad Request' }
  const text = JSON.stringify(errorBody(code, message))
  socket.end(`HTTP/1.1 ${GATEWAY_ERROR_CODES[code].status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`)
}

/** JSON schema of {@link ErrorBody}, used in every route's error responses. */
export const errorResponseSchema = {
  type: 'object', description: 'Error: see ERRORS.md for the codes.', required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', enum: Object.keys(GATEWAY_ERROR_CODES) }, message: { type: 'string' } } } },
} as const
