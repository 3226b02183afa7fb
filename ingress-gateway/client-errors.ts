import type { Socket } from 'node:net'
import { GATEWAY_ERROR_CODES, type ErrorBody, type GatewayErrorCode } from './errors'

/** Node's HTTP parser and timeout errors, and the gateway code each is answered with. */
const CLIENT_ERROR_CODES: Partial<Record<string, GatewayErrorCode>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
  HPE_HEADER_OVERFLOW: 'headers_too_large',
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }

/**
 * Fastify's `clientErrorHandler`: a request Node could not parse (malformed HTTP, headers too large) or that did not
 * arrive in time still gets the gateway's `{ error: { code, message } }` body before the connection is closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (!socket.writable) {
    socket.destroy(error)
    return
  }
  const code = CLIENT_ERROR_CODES[error.code ?? ''] ?? 'invalid_request'
  const message = code === 'invalid_request' ? `malformed HTTP request (${error.code ?? 'parse error'})` : code === 'request_timeout' ? 'the request did not arrive in time' : 'the request headers are too large'
  const body: ErrorBody = { error: { code, message } }
  const text = JSON.stringify(body)
  const status = GATEWAY_ERROR_CODES[code].status
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`)
}
