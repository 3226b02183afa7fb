import { createHash, timingSafeEqual } from 'node:crypto'

/** The tenant of every request in open mode. */
export const OPEN_TENANT = 'open'

/** What a session id may look like; `~` (the key separator) is excluded so keys cannot collide. */
export const SESSION_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$'

/** A tenant's id: the first 16 hex characters of sha256(API key). Stable, and reveals nothing about the key. */
export function tenantOf(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16)
}

/** The Restate virtual object key of a user's session: `${tenant}~${sessionId}`. Another tenant's key never matches. */
export function sessionKey(tenant: string, sessionId: string): string {
  return `${tenant}~${sessionId}`
}

/** Matches presented keys against the configured ones as sha256 digests with `timingSafeEqual`, always against every key. */
export function createKeyRing(apiKeys: readonly string[]): { tenantFor(presented: string): string | undefined } {
  const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()
  const entries = apiKeys.map((key) => ({ digest: sha256(key), tenant: tenantOf(key) }))
  return {
    tenantFor(presented) {
      const digest = sha256(presented)
      let match: string | undefined
      for (const entry of entries) if (timingSafeEqual(entry.digest, digest)) match = entry.tenant
      return match
    },
  }
}
