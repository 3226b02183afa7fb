import { createHash } from 'node:crypto'

// A client's `Idempotency-Key` goes to the tenant's admission object with the fingerprint of the request body: the
// object remembers each key's fingerprint (for Restate's idempotency retention, one day), so a repeat with the same
// body answers what the first request started and a reuse with another body is refused (422).

/** The fingerprint of a request body: sha256 of its JSON with object keys sorted, so key order does not matter. */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url')
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
