import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { PromptCache, countBreakpoints, estimateTokens, hasEmptyCachedText, modelOf } from './prompt-cache'
import type {
  AuthStyle, FakeAnthropicServer, FakeServerOptions, JsonObject as Body, RecordedRequest, ScriptHandler, ScriptedError, ScriptedMessage, ScriptedResponse,
} from './types'
import { errorBody, errorHeaders, errorTypeForStatus } from './wire-errors'
import type { SseEvent } from './wire-message'
import { formatEvent, messageBody, messageEvents, wireUsage } from './wire-message'

const placeholderMessage: ScriptedMessage = { kind: 'message', content: [{ type: 'text', text: 'partial answer that never finishes' }] }
const samplingParams = ['temperature', 'top_p', 'top_k'] as const

interface Context {
  readonly options: FakeServerOptions
  readonly requests: RecordedRequest[]
  readonly queue: ScriptedResponse[]
  readonly cache: PromptCache
  handler: ScriptHandler | undefined
  nextId: number
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

function parseJson(raw: string): Body | undefined {
  try {
    const value: unknown = JSON.parse(raw)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Body : undefined
  } catch {
    return undefined
  }
}

function authOf(request: IncomingMessage): { authStyle: AuthStyle; apiKey: string | undefined } {
  const headerKey = request.headers['x-api-key']
  if (typeof headerKey === 'string') return { authStyle: 'x-api-key', apiKey: headerKey }
  const match = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')
  return match?.[1] === undefined ? { authStyle: 'none', apiKey: undefined } : { authStyle: 'bearer', apiKey: match[1] }
}

function record(request: IncomingMessage, rawBody: string): RecordedRequest {
  const retryHeader = request.headers['x-stainless-retry-count']
  return {
    method: request.method ?? 'GET',
    path: (request.url ?? '/').split('?')[0] ?? '/',
    headers: request.headers,
    body: parseJson(rawBody),
    rawBody,
    retryCount: typeof retryHeader === 'string' ? Number(retryHeader) : undefined,
    ...authOf(request),
  }
}

function requestIdOf(context: Context): string {
  context.nextId += 1
  return `req_fake_${String(context.nextId).padStart(6, '0')}`
}

function sendJson(response: ServerResponse, status: number, requestId: string, body: object, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers })
  response.end(JSON.stringify(body))
}

function sendError(response: ServerResponse, requestId: string, error: ScriptedError): void {
  const errorType = error.errorType ?? errorTypeForStatus(error.status)
  sendJson(response, error.status, requestId, errorBody(errorType, error.message ?? `fake ${errorType}`, requestId), errorHeaders(error))
}

/** The 400/401 a real API would answer before looking at the script, or undefined when the request is acceptable. */
function validate(context: Context, recorded: RecordedRequest): ScriptedError | undefined {
  const { apiKey } = context.options
  if (apiKey !== undefined && recorded.apiKey !== apiKey) return { kind: 'error', status: 401, message: 'invalid x-api-key' }
  if (recorded.headers['anthropic-version'] === undefined) return { kind: 'error', status: 400, message: 'anthropic-version: header is required' }
  const body = recorded.body
  if (body === undefined) return { kind: 'error', status: 400, message: 'There was an issue with the format of the request body' }
  if (recorded.path === '/v1/messages/count_tokens') return undefined
  for (const field of ['model', 'max_tokens', 'messages']) {
    if (body[field] === undefined) return { kind: 'error', status: 400, message: `${field}: Field required` }
  }
  const sampling = samplingParams.find(name => body[name] !== undefined)
  if (sampling !== undefined && context.options.rejectSamplingParams !== false) return { kind: 'error', status: 400, message: `${sampling}: Extra inputs are not permitted` }
  const breakpoints = countBreakpoints(body)
  if (breakpoints > 4) return { kind: 'error', status: 400, message: `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.` }
  if (hasEmptyCachedText(body)) return { kind: 'error', status: 400, message: 'cache_control cannot be set for empty text blocks' }
  return undefined
}

async function nextScript(context: Context, recorded: RecordedRequest): Promise<ScriptedResponse> {
  const queued = context.queue.shift()
  if (queued !== undefined) return queued
  if (context.handler !== undefined) return context.handler(recorded)
  return { kind: 'error', status: 500, message: 'fake server: no scripted response', shouldRetry: false }
}

function writeEvents(response: ServerResponse, requestId: string, events: readonly SseEvent[], headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId, ...headers })
  for (const event of events) response.write(formatEvent(event))
}

async function answerMessage(context: Context, response: ServerResponse, requestId: string, body: Body, message: ScriptedMessage): Promise<void> {
  const usage = wireUsage(message, context.cache.account(body))
  const id = `msg_fake_${requestId.slice(-6)}`
  const model = modelOf(body)
  if (body['stream'] !== true) {
    sendJson(response, 200, requestId, messageBody(message, id, model, usage), message.headers)
    return
  }
  const events = messageEvents(message, id, model, usage)
  const ending = events.splice(-2) // message_delta and message_stop
  const intervalMs = message.deltaIntervalMs ?? context.options.deltaIntervalMs ?? 0
  if (intervalMs > 0) await writePaced(context, response, requestId, events, intervalMs, message.headers)
  else writeEvents(response, requestId, events, message.headers)
  if (response.destroyed) return
  if (message.pingForMs !== undefined) await sendPings(response, message.pingForMs)
  for (const event of ending) response.write(formatEvent(event))
  response.end()
}

/** Writes `events`, waiting `intervalMs` before each content delta; stops when the client went away. */
async function writePaced(context: Context, response: ServerResponse, requestId: string, events: readonly SseEvent[], intervalMs: number, headers: Record<string, string> = {}): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId, ...headers })
  for (const event of events) {
    if (event.event === 'content_block_delta') await new Promise(resolve => setTimeout(resolve, intervalMs))
    if (response.destroyed) return
    response.write(formatEvent(event))
    context.options.onEventSent?.(event)
  }
}

/** Writes a `ping` event every 50 ms for `durationMs`. */
async function sendPings(response: ServerResponse, durationMs: number): Promise<void> {
  for (let elapsedMs = 0; elapsedMs < durationMs && !response.destroyed; elapsedMs += 50) {
    await new Promise(resolve => setTimeout(resolve, 50))
    response.write(formatEvent({ event: 'ping', data: { type: 'ping' } }))
  }
}

function partialEvents(context: Context, body: Body, requestId: string, message: ScriptedMessage | undefined, count: number): SseEvent[] {
  const script = message ?? placeholderMessage
  const usage = wireUsage(script, context.cache.account(body))
  return messageEvents(script, `msg_fake_${requestId.slice(-6)}`, modelOf(body), usage).slice(0, count)
}

function errorEvent(errorType: string, requestId: string): SseEvent {
  return { event: 'error', data: { type: 'error', error: { type: errorType, message: errorType === 'overloaded_error' ? 'Overloaded' : `fake ${errorType}` }, request_id: requestId } }
}

async function answerScript(context: Context, response: ServerResponse, requestId: string, body: Body, script: ScriptedResponse): Promise<void> {
  switch (script.kind) {
    case 'message': return answerMessage(context, response, requestId, body, script)
    case 'error': return sendError(response, requestId, script)
    case 'stall':
      writeEvents(response, requestId, partialEvents(context, body, requestId, script.message, script.afterEvents))
      return
    case 'cut':
      writeEvents(response, requestId, partialEvents(context, body, requestId, script.message, script.afterEvents))
      response.write('event: content_block_delta\ndata: {"type":"content_bl')
      setTimeout(() => response.socket?.destroy(), 10)
      return
    case 'early_end':
      writeEvents(response, requestId, partialEvents(context, body, requestId, script.message, script.afterEvents))
      response.end()
      return
    case 'stream_error':
      writeEvents(response, requestId, [...partialEvents(context, body, requestId, script.message, script.afterEvents), errorEvent(script.errorType ?? 'api_error', requestId)])
      response.end()
      return
    case 'overloaded':
      if (script.midStream !== true) return sendError(response, requestId, { kind: 'error', status: 529, message: 'Overloaded', ...(script.retryAfterMs === undefined ? {} : { retryAfterMs: script.retryAfterMs }) })
      writeEvents(response, requestId, [...partialEvents(context, body, requestId, undefined, script.afterEvents ?? 1), errorEvent('overloaded_error', requestId)])
      response.end()
  }
}

async function handle(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const recorded = record(request, await readBody(request))
  context.requests.push(recorded)
  const requestId = requestIdOf(context)
  const isMessages = recorded.path === '/v1/messages'
  if (recorded.method !== 'POST' || (!isMessages && recorded.path !== '/v1/messages/count_tokens')) {
    return sendError(response, requestId, { kind: 'error', status: 404, message: `Not found: ${recorded.method} ${recorded.path}` })
  }
  const rejection = validate(context, recorded)
  if (rejection !== undefined) return sendError(response, requestId, rejection)
  const body = recorded.body ?? {}
  if (!isMessages) return sendJson(response, 200, requestId, { input_tokens: estimateTokens(body['messages']) + estimateTokens(body['system']) + estimateTokens(body['tools']) })
  await answerScript(context, response, requestId, body, await nextScript(context, recorded))
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  })
}

/**
 * Starts a wire-faithful fake of the Anthropic Messages API on an ephemeral port of 127.0.0.1: JSON and SSE answers,
 * error bodies with `request-id`, retry headers, both auth styles, a prefix-hash prompt cache, and scripted faults.
 */
export async function start(options: FakeServerOptions = {}): Promise<FakeAnthropicServer> {
  const context: Context = { options, requests: [], queue: [], cache: new PromptCache(options.minCacheableTokens ?? 0), handler: undefined, nextId: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    handle(context, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, requestIdOf(context), errorBody('api_error', `fake server crashed: ${String(error)}`, 'req_fake_crash'))
      else response.destroy()
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  const url = await listen(server)
  return {
    url,
    requests: context.requests,
    enqueue: (...responses) => { context.queue.push(...responses) },
    setHandler: handler => { context.handler = handler },
    close: () => new Promise<void>(resolve => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}
