import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the fake received. */
export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: unknown
}

/** What a route of the fake answers: a status and a JSON body (undefined: empty body). */
export interface FakeResponse {
  status: number
  body?: unknown
}

type Responder = (request: RecordedRequest) => FakeResponse | Promise<FakeResponse>

/**
 * A stand-in for the Restate ingress and admin APIs on one local port, for gateway unit tests only: routes are
 * `"METHOD /path"` strings answered by responders; every request is recorded; unknown routes get 404.
 */
export interface FakeRestate {
  url: string
  requests: RecordedRequest[]
  on(route: string, responder: Responder | FakeResponse): void
  /** Answers every request no `on` route matches (default: 404). */
  otherwise(responder: Responder): void
  close(): Promise<void>
}

/** Starts a {@link FakeRestate} on a free port. */
export async function startFakeRestate(): Promise<FakeRestate> {
  const routes = new Map<string, Responder>()
  const requests: RecordedRequest[] = []
  let fallback: Responder = (recorded) => ({ status: 404, body: { message: `fake: no route ${recorded.method} ${recorded.path}` } })
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: text === '' ? undefined : JSON.parse(text) }
      requests.push(recorded)
      const responder = routes.get(`${recorded.method} ${recorded.path}`)
      void Promise.resolve((responder ?? fallback)(recorded)).then((response) => {
        res.writeHead(response.status, { 'content-type': 'application/json' })
        res.end(response.body === undefined ? '' : JSON.stringify(response.body))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(route, responder) {
      routes.set(route, typeof responder === 'function' ? responder : () => responder)
    },
    otherwise(responder) {
      fallback = responder
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
