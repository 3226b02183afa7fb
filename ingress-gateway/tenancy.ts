import { createHash, timingSafeEqual } from 'node:crypto'

/** The tenant of every request in open mode. */
export const OPEN_TENANT = 'open'

/** Separates the tenant from the user's session id in a Restate object key; never part of either. */
const KEY_SEPARATOR = '~'

/** What a session id may look like (the route schemas enforce it; `~` is excluded so keys cannot collide). */
export const SESSION_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$'

/** A tenant's id: the first 16 hex characters of sha256(API key). Stable, and reveals nothing about the key. */
export function tenantOf(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16)
}

/** The Restate virtual object key of a user's session: `${tenant}~${sessionId}`. Another tenant's key never matches. */
export function sessionKey(tenant: string, sessionId: string): string {
  return `${tenant}${KEY_SEPARATOR}${sessionId}`
}

/** True when a Restate session key belongs to `tenant`. */
export function sessionKeyBelongsTo(key: string, tenant: string): boolean {
  return key.startsWith(`${tenant}${KEY_SEPARATOR}`)
}

/** Matches presented keys against the configured ones in time independent of where they differ. */
export interface KeyRing {
  /** The tenant of `presented`, or undefined when it is not a configured key. */
  tenantFor(presented: string): string | undefined
}

/** Builds a {@link KeyRing}: keys are compared as sha256 digests with `timingSafeEqual`, always against every key. */
export function createKeyRing(apiKeys: readonly string[]): KeyRing {
  const entries = apiKeys.map((key) => ({ digest: sha256(key), tenant: tenantOf(key) }))
  return {
    tenantFor(presented) {
      const digest = sha256(presented)
      let match: string | undefined
      for (const entry of entries) {
        if (timingSafeEqual(entry.digest, digest)) match = entry.tenant
      }
      return match
    },
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
