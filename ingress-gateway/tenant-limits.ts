import { GatewayError } from './errors'

/** Per-tenant (per API key) limits of the gateway; see docs/configuration.md. */
export interface TenantLimits {
  /** Runs (running or queued prompts, and steering that starts a run) a tenant may have at once; more get 429 `too_many_runs`. */
  maxConcurrentRuns: number
  /** Event streams a tenant may hold open at once; more get 429 `too_many_streams`. */
  maxEventStreams: number
  /** Requests a tenant may send per second, on average (token bucket refill rate). */
  requestsPerSecond: number
  /** Requests a tenant may send at once after being idle (token bucket size). */
  requestBurst: number
}

/** Defaults of {@link TenantLimits}. */
export const DEFAULT_TENANT_LIMITS: TenantLimits = { maxConcurrentRuns: 20, maxEventStreams: 10, requestsPerSecond: 20, requestBurst: 100 }

/** How long a client is told to wait (`Retry-After`, seconds) when it holds too many runs or streams. */
export const BUSY_RETRY_AFTER_SECONDS = 5

/** A token bucket per tenant: `take` spends one request or throws 429 `rate_limited` with `Retry-After`. */
export interface RateLimiter {
  take(tenant: string): void
}

/** Builds a {@link RateLimiter}; `nowMs` is the clock (tests drive it by hand). */
export function createRateLimiter(limits: Pick<TenantLimits, 'requestsPerSecond' | 'requestBurst'>, nowMs: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; updatedMs: number }>()
  return {
    take(tenant) {
      const now = nowMs()
      const bucket = buckets.get(tenant) ?? { tokens: limits.requestBurst, updatedMs: now }
      bucket.tokens = Math.min(limits.requestBurst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * limits.requestsPerSecond)
      bucket.updatedMs = now
      buckets.set(tenant, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return
      }
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / limits.requestsPerSecond))
      throw new GatewayError('rate_limited', `too many requests for this API key (at most ${limits.requestsPerSecond}/s, bursts of ${limits.requestBurst})`, { retryAfterSeconds })
    },
  }
}
