/* global sessionStorage, fetch */
const KEY_STORAGE = 'zidane.apiKey'

/** The API key the console signed in with (kept in sessionStorage: gone when the tab closes). */
export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) ?? ''
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key)
  else sessionStorage.removeItem(KEY_STORAGE)
}

/** An answer of the gateway that was not 2xx, with its `{ error: { code, message } }`. */
export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

/**
 * Calls the gateway's public API on this origin with the API key; JSON in and out. Resolves with the parsed body
 * (undefined for an empty one), rejects with {@link ApiError}.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, key?: string, signal?: AbortSignal }} [options]
 */
export async function api(path, options = {}) {
  const headers = { authorization: `Bearer ${options.key ?? apiKey()}` }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  })
  const text = await response.text()
  const body = text === '' ? undefined : JSON.parse(text)
  if (!response.ok) throw new ApiError(response.status, body?.error?.code ?? 'http_error', body?.error?.message ?? `HTTP ${response.status}`)
  return body
}

/** `/v1/sessions/<id>` with the id encoded. */
export function sessionPath(sessionId, rest = '') {
  return `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`
}
