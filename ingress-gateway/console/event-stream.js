/* global fetch, setTimeout, TextDecoderStream */
import { apiKey, sessionPath } from './api.js'

const RECONNECT_MS = 1_000

/**
 * Follows a session's events (`GET /v1/sessions/:id/events`) with fetch, since `EventSource` cannot send the API key:
 * each SSE message's JSON goes to `onEvent` as `{ type, data, seq? }`. When the stream ends or breaks it reconnects with
 * `Last-Event-ID`, so no durable event is missed or repeated (a live delta after a reconnect restarts its attempt at
 * offset 0, which the transcript handles). Stops when `signal` aborts.
 * @param {string} sessionId
 * @param {(event: { type: string, data: any, seq?: number }) => void} onEvent
 * @param {AbortSignal} signal
 * @param {(connected: boolean) => void} [onConnection]
 * @param {number} [afterSeq] the last event already seen (0: from the start)
 */
export async function followEvents(sessionId, onEvent, signal, onConnection = () => undefined, afterSeq = 0) {
  let lastEventId = afterSeq > 0 ? String(afterSeq) : ''
  while (!signal.aborted) {
    try {
      const headers = { authorization: `Bearer ${apiKey()}`, accept: 'text/event-stream' }
      if (lastEventId !== '') headers['last-event-id'] = lastEventId
      const response = await fetch(sessionPath(sessionId, '/events'), { headers, signal })
      if (response.ok && response.body) {
        onConnection(true)
        await readMessages(response.body, signal, (id, data) => {
          if (id !== '') lastEventId = id
          onEvent(data)
        })
      }
    } catch {
      // a network error or the abort: the loop decides
    }
    onConnection(false)
    if (!signal.aborted) await new Promise(resolve => setTimeout(resolve, RECONNECT_MS))
  }
}

/**
 * Parses SSE from `body`: `id:` and `data:` lines, a blank line ends a message; comments (keep-alives) and `retry:` are
 * skipped.
 * @param {ReadableStream<Uint8Array>} body
 * @param {AbortSignal} signal
 * @param {(id: string, data: any) => void} onMessage
 */
async function readMessages(body, signal, onMessage) {
  const reader = body.pipeThrough(/** @type {ReadableWritablePair<string, Uint8Array>} */ (/** @type {unknown} */ (new TextDecoderStream()))).getReader()
  signal.addEventListener('abort', () => { reader.cancel().catch(() => undefined) }, { once: true })
  let buffer = ''
  let id = ''
  let data = []
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value
    let newline
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '')
      buffer = buffer.slice(newline + 1)
      if (line === '') {
        if (data.length > 0) onMessage(id, parse(data.join('\n')))
        id = ''
        data = []
      } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      else if (line.startsWith('id:')) id = line.slice(3).trim()
    }
  }
}

function parse(text) {
  try {
    return JSON.parse(text)
  } catch {
    return { type: 'unknown', data: text }
  }
}
