import { createHash, randomUUID } from 'node:crypto'

// A client's `Idempotency-Key` reaches Restate with the fingerprint of the request body folded in
// (`<key>.<fingerprint>`): a repeat with the same body is the same Restate idempotency key (Restate answers the first
// invocation), and a reuse with another body is told apart by finding the key's other fingerprint in Restate's own
// table (`sys_invocation.idempotency_key`), which every gateway replica reads and which survives restarts.

/** Length of a body fingerprint: base64url of a sha256 digest. */
const FINGERPRINT_LENGTH = 43

/** The fingerprint of a request body: sha256 of its JSON with object keys sorted, so key order does not matter. */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url')
}

/** The idempotency key sent to Restate for the client's `clientKey` and a body's fingerprint. */
export function restateIdempotencyKey(clientKey: string, fingerprint: string): string {
  return `${clientKey}.${fingerprint}`
}

/** An idempotency key for a request that brought none: every send carries one, so the gateway can find it in Restate. */
export function generatedIdempotencyKey(): string {
  return `gateway-${randomUUID()}`
}

/** Whether `restateKey` is `clientKey` with some body's fingerprint (this body's or another's). */
export function isKeyOfClient(restateKey: string, clientKey: string): boolean {
  return restateKey.length === clientKey.length + 1 + FINGERPRINT_LENGTH && restateKey.startsWith(`${clientKey}.`)
}

/** The length of every Restate key of `clientKey` ({@link isKeyOfClient}), for the SQL that finds them. */
export function keyOfClientLength(clientKey: string): number {
  return clientKey.length + 1 + FINGERPRINT_LENGTH
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
