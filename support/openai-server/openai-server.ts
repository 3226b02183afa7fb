import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type {
  ChatScriptHandler, FakeOpenAiServer, FakeOpenAiServerOptions, JsonObject, RecordedChatRequest, ScriptedChat, ScriptedChatResponse,
} from './types'
import { validateChatRequest } from './validate-chat-request'
import { chatChunks, chatUsage } from './wire-chunks'

interface Context {
  readonly options: FakeOpenAiServerOptions
  readonly requests: RecordedChatRequest[]
  readonly queue: ScriptedChatResponse[]
  handler: ChatScriptHandler | undefined
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

function parseBody(raw: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(raw)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as JsonObject : undefined
  } catch {
    return undefined
  }
}

function record(request: IncomingMessage, raw: string): RecordedChatRequest {
  const body = parseBody(raw)
  const retry = request.headers['x-stainless-retry-count']
  const apiKey = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]
  return { method: request.method ?? 'GET', path: (request.url ?? '/').split('?')[0] ?? '/', headers: request.headers, body, apiKey, retryCount: typeof retry === 'string' ? Number(retry) : undefined, problems: validateChatRequest(body) }
}

function sendError(response: ServerResponse, requestId: string, status: number, message: string, type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error'): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId })
  response.end(JSON.stringify({ error: { message, type, param: null, code: null } }))
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** Writes the chunks as SSE `data:` lines, then `data: [DONE]` unless `stopAfter` cuts the stream short. */
async function writeChunks(context: Context, response: ServerResponse, requestId: string, chunks: JsonObject[], intervalMs: number, stopAfter?: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': requestId })
  const sent = chunks.slice(0, stopAfter ?? chunks.length)
  for (const [index, chunk] of sent.entries()) {
    if (index > 0 && intervalMs > 0) await sleep(intervalMs)
    if (response.destroyed) return
    response.write(`data: ${JSON.stringify(chunk)}\n\n`)
    context.options.onChunkSent?.(chunk)
  }
  if (stopAfter === undefined) response.end('data: [DONE]\n\n')
}

async function answer(context: Context, response: ServerResponse, requestId: string, body: JsonObject, script: ScriptedChatResponse): Promise<void> {
  if (script.kind === 'error') return sendError(response, requestId, script.status, script.message ?? `fake error ${script.status}`, script.type)
  const chat: ScriptedChat = script.kind === 'chat' ? script : (script.chat ?? { kind: 'chat', text: 'partial answer that never finishes' })
  const model = typeof body['model'] === 'string' ? body['model'] : 'unknown'
  const chunks = chatChunks(chat, `chatcmpl-${requestId}`, model, chatUsage(chat, body))
  const intervalMs = chat.chunkIntervalMs ?? context.options.chunkIntervalMs ?? 0
  if (body['stream'] !== true) return sendError(response, requestId, 400, 'this fake server answers streamed requests only')
  if (script.kind === 'chat') return writeChunks(context, response, requestId, chunks, intervalMs)
  await writeChunks(context, response, requestId, chunks, intervalMs, script.afterChunks)
  if (script.kind === 'end') response.end()
  if (script.kind === 'cut') {
    response.write('data: {"id":"chatcmpl-cut","choi')
    setTimeout(() => response.socket?.destroy(), 10)
  }
}

async function nextScript(context: Context, recorded: RecordedChatRequest): Promise<ScriptedChatResponse> {
  const queued = context.queue.shift()
  if (queued !== undefined) return queued
  if (context.handler !== undefined) return context.handler(recorded)
  return { kind: 'error', status: 500, message: 'fake server: no scripted response' }
}

async function handle(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const recorded = record(request, await readBody(request))
  context.requests.push(recorded)
  context.nextId += 1
  const requestId = `req_oai_${String(context.nextId).padStart(6, '0')}`
  if (recorded.method !== 'POST' || recorded.path !== '/v1/chat/completions') return sendError(response, requestId, 404, `Not found: ${recorded.method} ${recorded.path}`)
  const { apiKey } = context.options
  if (apiKey !== undefined && recorded.apiKey !== apiKey) return sendError(response, requestId, 401, 'Incorrect API key provided', 'invalid_request_error')
  if (recorded.problems.length > 0 && context.options.rejectInvalid !== false) return sendError(response, requestId, 400, recorded.problems.join('; '))
  await answer(context, response, requestId, recorded.body ?? {}, await nextScript(context, recorded))
}

/**
 * Starts a wire-faithful fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed) on an
 * ephemeral port of 127.0.0.1: SSE `data:` chunks ending in `data: [DONE]`, usage in the last chunk, tool calls split
 * across chunks, OpenAI's error bodies, Bearer auth, and every request's shape checked ({@link validateChatRequest}).
 */
export async function startOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const context: Context = { options, requests: [], queue: [], handler: undefined, nextId: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    handle(context, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 'req_oai_crash', 500, `fake server crashed: ${String(error)}`)
      else response.destroy()
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  const url = await new Promise<string>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  })
  return {
    baseURL: `${url}/v1`,
    requests: context.requests,
    enqueue: (...responses) => { context.queue.push(...responses) },
    setHandler: handler => { context.handler = handler },
    close: () => new Promise<void>(resolve => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}
