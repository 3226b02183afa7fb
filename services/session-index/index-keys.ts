/** Separates the tenant from the session id in a session key, as `ingress-gateway/tenancy.ts` builds them. */
const TENANT_SEPARATOR = '~'

/** Where a session key is indexed: its tenant's index and its id there; undefined for a key without a tenant. */
export function indexedSession(sessionKey: string): { tenant: string; id: string } | undefined {
  const separator = sessionKey.indexOf(TENANT_SEPARATOR)
  if (separator <= 0 || separator === sessionKey.length - 1) return undefined
  return { tenant: sessionKey.slice(0, separator), id: sessionKey.slice(separator + 1) }
}

/** The session key of session `id` of `tenant` (the inverse of {@link indexedSession}). */
export function sessionKeyOf(tenant: string, id: string): string {
  return `${tenant}${TENANT_SEPARATOR}${id}`
}
