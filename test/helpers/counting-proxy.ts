import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** An HTTP proxy in front of one Restate API that records every request it forwards (see {@link startCountingProxy}). */
export interface CountingProxy {
  /** `http://127.0.0.1:<port>`: hand it to the client under test in place of the API's URL. */
  url: string
  /** `METHOD /path` of every request so far; clear it with `requests.length = 0`. */
  readonly requests: string[]
  close(): Promise<void>
}

/** Starts a {@link CountingProxy} forwarding to `targetUrl` (method, path, content type, idempotency key and body). */
export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const requests: string[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      requests.push(`${request.method ?? 'GET'} ${request.url ?? '/'}`)
      const headers: Record<string, string> = {}
      for (const name of ['content-type', 'accept', 'idempotency-key']) {
        const value = request.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined
      void fetch(new URL(request.url ?? '/', targetUrl), { method: request.method ?? 'GET', headers, ...(body ? { body } : {}) })
        .then(async answer => {
          const text = Buffer.from(await answer.arrayBuffer())
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text)
        })
        .catch(() => response.writeHead(502).end())
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
