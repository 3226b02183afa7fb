import { once } from 'node:events'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * What the gate does with one request: pass it to the real ingress, answer 503 itself, hold it until
 * {@link IngressGate.release}, or reset its connection without an answer.
 */
export type GateAction = 'forward' | 'fail' | 'hold' | 'reset'

/** A request the gate saw: its path, its parsed JSON body, what it did with it and whether its connection was reused. */
export interface GatedRequest { path: string; body: unknown; action: GateAction; reusedConnection: boolean }

/** An HTTP server in front of Restate's ingress whose answer to each request a test decides (see {@link startIngressGate}). */
export interface IngressGate {
  /** `http://127.0.0.1:<port>`: give it to the client under test as its ingress URL. */
  url: string
  /** Every request so far, in the order their bodies arrived (the index `decide` was given). */
  readonly requests: GatedRequest[]
  /** Forwards the held requests to the ingress (their answers reach the client then). */
  release(): void
  /** Resolves once `count` requests have arrived. */
  received(count: number): Promise<void>
  /** Answers the held requests 503, closes every connection and stops listening. */
  close(): Promise<void>
}

/**
 * Starts a gate in front of `ingressUrl`. `decide(index, path)` picks the action of request `index` (0-based). Node's
 * server keeps HTTP connections alive by default, so a client's second request can arrive on a reused connection (and
 * be reset there).
 */
export async function startIngressGate(ingressUrl: string, decide: (index: number, path: string) => GateAction): Promise<IngressGate> {
  const requests: GatedRequest[] = []
  let held: Array<(forward: boolean) => void> = []
  let closed = false
  let arrivals: Array<{ count: number; wake: () => void }> = []
  const seenOnSocket = new WeakSet<object>()
  const forward = async (path: string, text: string, response: ServerResponse): Promise<void> => {
    const answer = await fetch(new URL(path, ingressUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })
    const answerText = await answer.text()
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answerText)
  }
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const path = request.url ?? '/'
    const reusedConnection = seenOnSocket.has(request.socket)
    seenOnSocket.add(request.socket)
    const action = decide(requests.length, path)
    requests.push({ path, body: text.length > 0 ? JSON.parse(text) : undefined, action, reusedConnection })
    arrivals = arrivals.filter((waiting) => {
      if (requests.length < waiting.count) return true
      waiting.wake()
      return false
    })
    if (action === 'reset') return void request.socket.resetAndDestroy()
    const refuse = (): void => void response.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"gate closed"}')
    if (action === 'fail' || closed) return refuse()
    if (action === 'hold' && !(await new Promise<boolean>(resolve => held.push(resolve)))) return refuse()
    await forward(path, text, response)
  }
  const server = createServer((request, response) => {
    // A forward that failed: the client sees its connection end at once, not a silent wait.
    handle(request, response).catch(() => { response.destroy() })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    release() {
      const waiting = held
      held = []
      for (const resume of waiting) resume(true)
    },
    received(count) {
      if (requests.length >= count) return Promise.resolve()
      return new Promise(wake => arrivals.push({ count, wake }))
    },
    close: async () => {
      closed = true
      for (const resume of held) resume(false)
      held = []
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
