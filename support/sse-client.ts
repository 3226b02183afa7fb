import http from 'node:http'

/** One Server-Sent Events frame as a viewer received it. */
export interface SseFrame {
  event: string
  id: string | undefined
  data: Record<string, unknown>
  /** `performance.now()` when the frame's last line arrived. */
  receivedAtMs: number
}

/** An open SSE connection that records every frame. */
export interface SseViewer {
  readonly status: number
  readonly frames: SseFrame[]
  /** Resolves with the first frame (from index `from` on) that `match` accepts; rejects after `timeoutMs`. */
  waitFor(match: (frame: SseFrame) => boolean, timeoutMs?: number, from?: number): Promise<SseFrame>
  close(): void
}

/** Opens `url` as an SSE stream (node:http, no buffering) with `headers`; resolves once the status line arrived. */
export function openSseViewer(url: string, headers: Record<string, string>): Promise<SseViewer> {
  return new Promise((resolve, reject) => {
    const frames: SseFrame[] = []
    const waiters = new Set<() => void>()
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, response => {
      response.setEncoding('utf8')
      let pending = ''
      response.on('data', (chunk: string) => {
        pending += chunk
        const blocks = pending.split('\n\n')
        pending = blocks.pop() ?? ''
        const now = performance.now()
        for (const block of blocks) {
          const frame = parseFrame(block, now)
          if (frame) frames.push(frame)
        }
        for (const wake of waiters) wake()
      })
      response.on('error', () => undefined)
      resolve({
        status: response.statusCode ?? 0,
        frames,
        waitFor: (match, timeoutMs = 60_000, from = 0) => waitForFrame(frames, waiters, match, timeoutMs, from),
        close: () => { request.destroy() },
      })
    })
    request.on('socket', socket => socket.setNoDelay(true))
    request.on('error', reject)
  })
}

function parseFrame(block: string, receivedAtMs: number): SseFrame | undefined {
  let event = 'message'
  let id: string | undefined
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7)
    else if (line.startsWith('id: ')) id = line.slice(4)
    else if (line.startsWith('data: ')) data.push(line.slice(6))
  }
  if (data.length === 0) return undefined
  return { event, id, data: JSON.parse(data.join('\n')) as Record<string, unknown>, receivedAtMs }
}

function waitForFrame(frames: SseFrame[], waiters: Set<() => void>, match: (frame: SseFrame) => boolean, timeoutMs: number, from: number): Promise<SseFrame> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const found = frames.slice(from).find(match)
      if (!found) return false
      cleanup()
      resolve(found)
      return true
    }
    const timer = setTimeout(() => { cleanup(); reject(new Error(`no matching SSE frame within ${timeoutMs} ms; got ${frames.map(frame => frame.event).join(', ')}`)) }, timeoutMs)
    const wake = (): void => { check() }
    const cleanup = (): void => { clearTimeout(timer); waiters.delete(wake) }
    waiters.add(wake)
    check()
  })
}
