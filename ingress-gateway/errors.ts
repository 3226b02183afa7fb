import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { RouteTable } from './route-table'

/**
 * Every error the gateway answers with: a stable code, its HTTP status and what it means. Codes are permanent (clients
 * branch on them); `ERRORS.md` documents the same list and a test keeps the two in sync.
 */
export const GATEWAY_ERROR_CODES = {
  invalid_request: { status: 400, description: 'The request does not match the route schema (body, params, query or headers), or the body is not valid UTF-8 or not valid JSON, or has a `__proto__` or `constructor` key. The message names the field.' },
  unauthorized: { status: 401, description: 'The `Authorization: Bearer <key>` header is missing, malformed, or carries a key the gateway does not know.' },
  bad_token: { status: 403, description: 'The `token` of an answer link does not match the question id.' },
  route_not_found: { status: 404, description: 'No route matches the path (or a path segment is `.`/`..`).' },
  session_not_found: { status: 404, description: 'The session does not exist for this API key (sessions of other keys are invisible).' },
  question_not_found: { status: 404, description: 'No pending question has this id, or it belongs to another API key.' },
  method_not_allowed: { status: 405, description: 'The path exists but not with this method; the `Allow` header lists the methods it takes.' },
  request_timeout: { status: 408, description: 'The request (headers and body) did not arrive within `GATEWAY_REQUEST_TIMEOUT_MS` (default 30 s); the connection is closed.' },
  nothing_running: { status: 409, description: 'Cancel was asked but the session has no running invocation.' },
  already_answered: { status: 409, description: 'The question was answered before; the first answer stands.' },
  run_cancelled: { status: 409, description: 'The run awaited with `?wait=true` was cancelled before it finished.' },
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
  run_failed: { status: 500, description: 'The run awaited with `?wait=true` ended with a terminal error in Restate; the message carries it.' },
  restate_error: { status: 502, description: 'Restate answered with an unexpected error (for example a service that is not registered); the message carries its status and text.' },
  restate_unavailable: { status: 503, description: 'Restate (ingress or admin API) cannot be reached or timed out.' },
} as const satisfies Record<string, { status: number; description: string }>

/** A stable gateway error code, one of {@link GATEWAY_ERROR_CODES}. */
export type GatewayErrorCode = keyof typeof GATEWAY_ERROR_CODES

/** An error the gateway answers with as `{ error: { code, message } }` and the code's status. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode
  readonly statusCode: number
  /** Sent as `Retry-After` (seconds) with the response, for limits. */
  readonly retryAfterSeconds: number | undefined

  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options)
    this.name = 'GatewayError'
    this.code = code
    this.statusCode = GATEWAY_ERROR_CODES[code].status
    this.retryAfterSeconds = options?.retryAfterSeconds
  }
}

/**
 * Restate answered with an error status. `status` is the HTTP status (for an invocation's terminal error, its code);
 * `source` is Restate's `source` field: `invocation` when the handler itself failed.
 */
export class RestateCallError extends Error {
  readonly status: number
  readonly source: string | undefined

  constructor(status: number, message: string, source?: string) {
    super(message)
    this.name = 'RestateCallError'
    this.status = status
    this.source = source
  }
}

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { code: GatewayErrorCode; message: string }
}

/** Fastify's own error codes that are the client's fault, and the gateway code each becomes. */
const FASTIFY_CODES: Partial<Record<string, GatewayErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
  FST_ERR_MAX_PARAM_LENGTH: 'invalid_request',
  FST_ERR_ASYNC_CONSTRAINT: 'invalid_request',
}

/** The gateway code of a client error (4xx) some plugin raised with only a status: it stays a 4xx. */
const CLIENT_STATUS_CODES: Partial<Record<number, GatewayErrorCode>> = {
  401: 'unauthorized',
  404: 'route_not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
}

interface ValidationIssue {
  instancePath: string
  keyword: string
  params: Record<string, unknown>
  message?: string | undefined
}

/** A precise one-line message for a schema violation, naming the field: `body.prompt must be string`. */
export function describeValidation(context: string, issue: ValidationIssue): string {
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
  if (mapped === 'invalid_request' && error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new GatewayError(mapped, 'body is not valid JSON')
  if (mapped !== undefined) return new GatewayError(mapped, error.message)
  return clientStatusError(error.statusCode) ?? new GatewayError('internal_error', 'internal error')
}

/** 415 `unsupported_media_type` for the request's content type (a type other than JSON, or a charset other than UTF-8). */
export function unsupportedMediaType(request: FastifyRequest): GatewayError {
  return new GatewayError('unsupported_media_type', `content-type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`)
}

/** A plugin's 4xx (a static file plugin's 403 for a path outside its root, …) stays a 4xx with a gateway code. */
function clientStatusError(statusCode: number | undefined): GatewayError | undefined {
  if (statusCode === undefined || statusCode < 400 || statusCode > 499) return undefined
  return new GatewayError(CLIENT_STATUS_CODES[statusCode] ?? 'invalid_request', `the request was refused (${statusCode})`)
}

/**
 * Answers `error` as `{ error: { code, message } }` with its code's status: the gateway's error handler, also used as
 * fastify's `frameworkErrors` handler (bad URL encoding, over-long params), which runs before any route.
 */
export function replyWithError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = toGatewayError(error, request)
  if (mapped.code === 'internal_error') request.log.error({ err: error }, 'unhandled gateway error')
  else if (mapped.statusCode >= 500) request.log.warn({ code: mapped.code, message: mapped.message }, 'upstream error')
  const body: ErrorBody = { error: { code: mapped.code, message: mapped.message } }
  if (mapped.code === 'unauthorized') void reply.header('www-authenticate', 'Bearer')
  if (mapped.retryAfterSeconds !== undefined) void reply.header('retry-after', String(mapped.retryAfterSeconds))
  return reply.status(mapped.statusCode).send(body)
}

/**
 * Installs the one error handler and the not-found handler: every failure leaves as `{ error: { code, message } }`.
 * A path that a route serves with other methods gets 405 `method_not_allowed` with `Allow` (from `routes`).
 */
export function installErrorHandlers(app: FastifyInstance, routes: RouteTable): void {
  app.setErrorHandler(replyWithError)
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? ''
    const allowed = routes.methodsOf(path)
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const body: ErrorBody = { error: { code: 'method_not_allowed', message: `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}` } }
      return reply.status(405).header('allow', allowed.join(', ')).send(body)
    }
    const body: ErrorBody = { error: { code: 'route_not_found', message: `no route ${request.method} ${path}` } }
    return reply.status(404).send(body)
  })
}

/** JSON schema of {@link ErrorBody}, used in every route's error responses. */
export const errorResponseSchema = {
  type: 'object',
  description: 'Error: see ERRORS.md for the codes.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string', enum: Object.keys(GATEWAY_ERROR_CODES) }, message: { type: 'string' } },
    },
  },
} as const
