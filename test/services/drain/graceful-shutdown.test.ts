import { once } from 'node:events'
import * as http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { Interceptor } from '@restatedev/restate-sdk'
import { createAttemptDrain } from '../../../services/drain/attempt-drain'
import { installGracefulShutdown } from '../../../services/drain/graceful-shutdown'

/** A real HTTP/2 server behind the drain whose one handler runs a step held until `release()`. */
async function serveHeldStep(): Promise<{ port: number; server: http2.Http2Server; release: () => void; exited: Promise<number> }> {
  const drain = createAttemptDrain()
  let release = (): void => undefined
  const held = new Promise<void>(resolve => { release = resolve })
  const server = http2.createServer(drain.handler((request, response) => {
    response.writeHead(200)
    // As the SDK does: the attempt's completed signal aborts when its stream closes.
    const completed = new AbortController()
    request.once('close', () => completed.abort())
    const hooks = drain.hooks({ request: { id: String(request.headers['x-restate-invocation-id']), attemptCompletedSignal: completed.signal } } as Parameters<typeof drain.hooks>[0])
    const run = (hooks.interceptor as Interceptor).run as (name: string, next: () => Promise<void>) => Promise<void>
    void run('the step', () => held).then(() => response.write('the step result', () => undefined))
  }))
  let exit: (code: number) => void = () => undefined
  const exited = new Promise<number>(resolve => { exit = resolve })
  installGracefulShutdown({ server, drain, graceMs: 10_000, log: () => undefined, exit: code => { exit(code); return undefined as never } })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { port: (server.address() as AddressInfo).port, server, release, exited }
}

/** Opens an attempt stream as Restate does (request body left open) and collects what comes back. */
function openAttempt(client: http2.ClientHttp2Session, invocationId: string): { status: Promise<number>; body: () => string; closed: Promise<void> } {
  const stream = client.request({ ':method': 'POST', ':path': '/invoke/session/run', 'x-restate-invocation-id': invocationId }, { endStream: false })
  let body = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => { body += chunk })
  stream.on('error', () => undefined)
  return {
    status: new Promise(resolve => stream.once('response', headers => resolve(Number(headers[':status'])))),
    body: () => body,
    closed: new Promise(resolve => stream.once('close', () => resolve())),
  }
}

describe('graceful shutdown of the services endpoint', () => {
  const cleanups: Array<() => void> = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.removeAllListeners(signal)
  })

  it('sends no GOAWAY while a step runs (Restate drops a connection a GOAWAY races a new request on); new requests get 503', async () => {
    const endpoint = await serveHeldStep()
    const client = http2.connect(`http://127.0.0.1:${endpoint.port}`)
    cleanups.push(() => { client.destroy(); endpoint.server.close() })
    const goaways: number[] = []
    client.on('goaway', code => goaways.push(code))
    client.on('error', () => undefined)
    const running = openAttempt(client, 'inv_running')
    expect(await running.status).toBe(200)

    process.emit('SIGTERM', 'SIGTERM')
    await new Promise(resolve => setTimeout(resolve, 200))
    // Restate's retry of another invocation lands on the same connection: answered 503, the connection stays up.
    const late = openAttempt(client, 'inv_late')
    expect(await late.status).toBe(503)
    await late.closed
    expect(goaways).toEqual([])

    endpoint.release()
    await running.closed
    expect(running.body()).toBe('the step result')
    expect(await endpoint.exited).toBe(0)
  })

  it('flushes the traces\' batch after the drain and before the exit', async () => {
    const server = http2.createServer()
    const order: string[] = []
    let exit: (code: number) => void = () => undefined
    const exited = new Promise<number>(resolve => { exit = resolve })
    const drain = { ...createAttemptDrain(), drain: async () => { order.push('drained') } }
    installGracefulShutdown({ server, drain, graceMs: 1_000, log: () => undefined, flush: async () => { order.push('flushed') }, exit: code => { order.push('exit'); exit(code); return undefined as never } })
    process.emit('SIGTERM', 'SIGTERM')
    expect(await exited).toBe(0)
    expect(order).toEqual(['drained', 'flushed', 'exit'])
  })
})
