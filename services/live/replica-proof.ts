import { createHmac, timingSafeEqual } from 'node:crypto'
import type { LiveReplicaClaim } from '../../contract/live-replicas'

/**
 * The proof that a live hub URL was registered by a holder of the live token (`ZIDANE_LIVE_TOKEN`): HMAC-SHA256 of
 * the URL and the process's instance id, keyed with the token, base64url. Restate's ingress does not authenticate its
 * callers, so the registry's handlers and the gateways check it: a process without the token cannot make a gateway
 * connect to a URL of its choosing (and hand it the token). The token itself never travels in a registration.
 */
export function replicaProof(token: string, url: string, instance: string): string {
  return createHmac('sha256', token).update(`zidane-live-replica/v1\n${url}\n${instance}`).digest('base64url')
}

/** Whether `claim` carries the proof made with `token`; false for a claim of the wrong shape. */
export function hasValidProof(token: string, claim: Partial<Record<keyof LiveReplicaClaim, unknown>>): boolean {
  const { url, instance, proof } = claim
  if (typeof url !== 'string' || typeof instance !== 'string' || typeof proof !== 'string') return false
  const expected = Buffer.from(replicaProof(token, url, instance))
  const presented = Buffer.from(proof)
  return presented.length === expected.length && timingSafeEqual(presented, expected)
}

/** Whether `url` is an absolute http(s) URL without credentials, query or fragment: the only kind a hub is reached at. */
export function isHubUrl(url: unknown): url is string {
  if (typeof url !== 'string' || url.length > MAX_HUB_URL_LENGTH) return false
  try {
    const parsed = new URL(url)
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === ''
  } catch {
    return false
  }
}

/** Longest hub URL the registry takes. */
export const MAX_HUB_URL_LENGTH = 512
