import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import type { LiveDelta, LiveMessage } from '../../contract/live-delta'
import type { LiveHub } from './live-hub'
import { pacedStream } from './paced-stream'

/** Options of {@link createLiveServer}. */
export interface LiveServerOptions {
  /** The shared secret the gateway sends as `authorization: Bearer <token>`. */
  token: string
  /** A blank line this often, so a connection that died silently is noticed (default 15 s). */
  keepAliveMs?: number
  /** A reader whose unsent bytes would pass this is cut off (default `MAX_LIVE_BUFFER_BYTES`, 1 MiB). */
  maxBufferedBytes?: number
}

/**
 * The hub's internal HTTP endpoint (built, not listening): `GET /v1/live/<session key>` with the shared token streams
 * the session's deltas as NDJSON lines ({@link LiveMessage}): the buffered ones of the attempts in progress from
 * their start, then live ones, until the client leaves. 401 without the token, 404 for any other path. A reader that
 * falls behind by more than `maxBufferedBytes` is cut off (see {@link pacedStream}); it reconnects and gets the replay.
 */
export function createLiveServer(hub: LiveHub, options: LiveServerOptions): Server {
  const server = createServer((request, response) => { serve(hub, options, request, response) })
  server.on('connection', socket => socket.setNoDelay(true))
  return server
}

function serve(hub: LiveHub, options: LiveServerOptions, request: IncomingMessage, response: ServerResponse): void {
  if (!authorized(request.headers.authorization, options.token)) return reject(response, 401, 'live_unauthorized')
  const sessionKey = sessionKeyOf(request)
  if (sessionKey === undefined) return reject(response, 404, 'live_not_found')
  response.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' })
  response.flushHeaders()
  const stream = pacedStream(response, options.maxBufferedBytes)
  let replaying = true
  const unsubscribe = hub.subscribe(sessionKey, (delta) => {
    if (replaying) stream.replay(() => lineOf(delta))
    else stream.send(lineOf(delta))
  })
  replaying = false
  const keepAlive = setInterval(() => stream.send('\n'), options.keepAliveMs ?? 15_000)
  response.once('close', () => {
    clearInterval(keepAlive)
    unsubscribe()
  })
}

function lineOf(delta: LiveDelta): string {
  return `${JSON.stringify({ type: 'delta', delta } satisfies LiveMessage)}\n`
}

function sessionKeyOf(request: IncomingMessage): string | undefined {
  if (request.method !== 'GET') return undefined
  const match = /^\/v1\/live\/([^/?]+)$/.exec(request.url ?? '')
  if (match?.[1] === undefined) return undefined
  try {
    return decodeURIComponent(match[1])
  } catch {
    return undefined
  }
}

function authorized(header: string | undefined, token: string): boolean {
  const presented = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '')
  const expected = Buffer.from(token)
  return token !== '' && presented.length === expected.length && timingSafeEqual(presented, expected)
}

function reject(response: ServerResponse, status: number, code: string): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ error: { code, message: status === 401 ? 'the live stream needs the internal token' : 'no such live stream' } }))
}
