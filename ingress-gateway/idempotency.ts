import { createHash } from 'node:crypto'

/** The fingerprint of a request body: sha256 of its JSON with object keys sorted, so key order does not matter. */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url')
}

/**
 * The `idempotency` field of an admission request for a client's `Idempotency-Key`: the admission remembers each key's
 * body fingerprint (one day), so a repeat answers what the first request started and another body gets 422.
 */
export function idempotencyOf(key: string | undefined, body: unknown): { idempotency?: { key: string; fingerprint: string } } {
  return key === undefined ? {} : { idempotency: { key, fingerprint: bodyFingerprint(body) } }
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
