import { createHash, randomBytes } from 'node:crypto'
import { deploymentModels } from 'zidane/providers'
import type { ModelCatalog } from 'zidane/providers'
import { DEFAULT_LIVE_REFRESH_MS } from './live-replicas'
import { MAX_HOLD_MS } from './restate-ingress'
import { DEFAULT_TENANT_LIMITS, type TenantLimits } from './tenant-limits'

/** Everything the gateway needs to run. Restate is reached only through these URLs (tests point them anywhere). */
export interface GatewayConfig {
  /** API keys; each is a tenant. Empty only in open mode. */
  apiKeys: readonly string[]
  /** Open dev mode: no auth, every caller is tenant `open`. Only when no keys are configured. */
  open: boolean
  /** Restate ingress and admin API base URLs, without a trailing slash. */
  restateIngressUrl: string
  restateAdminUrl: string
  port: number
  host: string
  /** Base of the links the gateway hands out (answer URLs), without a trailing slash. */
  publicUrl: string
  /** HMAC-SHA256 secret of answer-link tokens. */
  answerSecret: string
  bodyLimitBytes: number
  /** How long a request (headers and body) may take to arrive before it gets 408; default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number
  /** Per-tenant limits; each missing one takes its default from {@link DEFAULT_TENANT_LIMITS}. */
  limits?: Partial<TenantLimits>
  /**
   * The services' live hubs (`model:delta` events) with their `ZIDANE_LIVE_TOKEN`: the fixed `urls` (`ZIDANE_LIVE_URLS`),
   * or else those the replicas registered in Restate, watched at `registryUrl` (a parked wait of at most `refreshMs`). Absent: durable events only.
   */
  live?: { token: string; urls?: string[]; registryUrl?: string; refreshMs?: number }
  /**
   * Longest a session's shared watch stays parked in Restate before it is renewed (`GATEWAY_EVENT_WATCH_MS`, default and
   * most 240000): an idle followed session costs three short invocations per period, whatever its number of viewers.
   */
  eventWatchMs?: number
  /** Longest one held call of `?wait=true` (its admission, then its attach) lasts before it is renewed (default and most 240000). */
  attachTimeoutMs?: number
  /** How long a prompt, message or answer waits for the services before it is answered 202 (default 10000; answers 5000). */
  servicesWaitMs?: number
  /**
   * Browser origins allowed to call the API cross-origin (`GATEWAY_CORS_ORIGINS`, comma-separated, e.g.
   * `https://app.example.com`). Empty (the default): no cross-origin access at all.
   */
  corsOrigins?: string[]
  /** The models prompts may name (`ZIDANE_PROVIDERS`, read as the services read it: docs/providers.md); absent: not checked. */
  models?: ModelCatalog
  /** Fastify logger switch; `server.ts` turns it on, tests leave it off. */
  logger?: boolean
  /** Fastify log level when the logger is on (`LOG_LEVEL`, default `info`: one line per request). */
  logLevel?: string
}

/** Thrown when the environment does not describe a runnable gateway; the message says what to set. */
export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError'
}

/** The shortest API key and answer secret the gateway accepts: shorter ones are guessable. */
const MIN_SECRET_LENGTH = 16

/** Default of {@link GatewayConfig.requestTimeoutMs}: 30 s to send a request (not to get the answer). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/** Throws {@link GatewayConfigError} when a key is shorter than {@link MIN_SECRET_LENGTH} (the key itself is not printed). */
export function checkApiKeyLengths(apiKeys: readonly string[]): void {
  const short = apiKeys.findIndex((key) => key.length < MIN_SECRET_LENGTH)
  if (short < 0) return
  throw new GatewayConfigError(
    `API key ${short + 1} of GATEWAY_API_KEYS has ${apiKeys[short]?.length ?? 0} characters; every key needs at least ${MIN_SECRET_LENGTH} (generate one with: openssl rand -hex 24).`,
  )
}

/**
 * Reads the gateway configuration from environment variables (see `ingress-gateway/README.md`). Throws
 * {@link GatewayConfigError} when there are no API keys and `GATEWAY_OPEN=1` is not set, or when a value is malformed.
 */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const apiKeys = list(env.GATEWAY_API_KEYS)
  const open = apiKeys.length === 0 && env.GATEWAY_OPEN === '1'
  if (apiKeys.length === 0 && !open) {
    throw new GatewayConfigError('No API keys: set GATEWAY_API_KEYS=<key>[,<key>...], or GATEWAY_OPEN=1 to run without auth (development only).')
  }
  checkApiKeyLengths(apiKeys)
  const host = nonEmpty(env.GATEWAY_HOST) ?? '127.0.0.1'
  const port = integerVariable(env, 'GATEWAY_PORT', 3000, 0, 65535)
  const restateIngressUrl = urlVariable(env, 'RESTATE_INGRESS_URL', 'http://127.0.0.1:8080')
  return {
    apiKeys, open, host, port, restateIngressUrl, models: modelsOf(env),
    restateAdminUrl: urlVariable(env, 'RESTATE_ADMIN_URL', 'http://127.0.0.1:9070'),
    publicUrl: urlVariable(env, 'GATEWAY_PUBLIC_URL', defaultPublicUrl(host, port)),
    answerSecret: answerSecret(env, apiKeys),
    bodyLimitBytes: integerVariable(env, 'GATEWAY_BODY_LIMIT_BYTES', 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
    requestTimeoutMs: integerVariable(env, 'GATEWAY_REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1, 3_600_000),
    limits: tenantLimits(env),
    eventWatchMs: integerVariable(env, 'GATEWAY_EVENT_WATCH_MS', MAX_HOLD_MS, 1_000, MAX_HOLD_MS),
    corsOrigins: list(env.GATEWAY_CORS_ORIGINS).map(corsOrigin),
    ...liveHubs(env, restateIngressUrl),
  }
}

/** One origin of `GATEWAY_CORS_ORIGINS`: `http(s)://host[:port]`, nothing after it; returned as the browser spells it. */
function corsOrigin(raw: string): string {
  const url = URL.parse(raw)
  const bare = url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === raw.replace(/\/$/, '').toLowerCase()
  if (url === null || !bare) throw new GatewayConfigError(`GATEWAY_CORS_ORIGINS must list origins such as https://app.example.com (scheme, host and port only), got "${raw}".`)
  return url.origin
}

/** Live deltas need the token; the hubs are the fixed `ZIDANE_LIVE_URLS`, or else those registered in Restate. */
function liveHubs(env: NodeJS.ProcessEnv, registryUrl: string): Pick<GatewayConfig, 'live'> {
  const urls = list(env.ZIDANE_LIVE_URLS)
  const token = nonEmpty(env.ZIDANE_LIVE_TOKEN)
  if (token === undefined && urls.length > 0) throw new GatewayConfigError('ZIDANE_LIVE_URLS is set without ZIDANE_LIVE_TOKEN, the token the services\' live hubs require.')
  if (token === undefined) return {}
  if (urls.length > 0) return { live: { urls: urls.map((url) => urlVariable({ ZIDANE_LIVE_URLS: url }, 'ZIDANE_LIVE_URLS', url)), token } }
  return { live: { token, registryUrl, refreshMs: integerVariable(env, 'ZIDANE_LIVE_REFRESH_MS', DEFAULT_LIVE_REFRESH_MS, 100, 600_000) } }
}

const LIMIT_VARIABLES: Record<keyof TenantLimits, string> = {
  maxConcurrentRuns: 'GATEWAY_MAX_CONCURRENT_RUNS',
  maxEventStreams: 'GATEWAY_MAX_EVENT_STREAMS',
  requestsPerSecond: 'GATEWAY_RATE_PER_SECOND',
  requestBurst: 'GATEWAY_RATE_BURST',
}

function tenantLimits(env: NodeJS.ProcessEnv): TenantLimits {
  const entries = Object.entries(LIMIT_VARIABLES).map(([limit, name]) => [limit, integerVariable(env, name, DEFAULT_TENANT_LIMITS[limit as keyof TenantLimits], 1, 1_000_000)])
  return Object.fromEntries(entries) as TenantLimits
}

/**
 * The default answer-link secret: derived from the API keys (stable across restarts and replicas that share the keys;
 * rotating the keys invalidates outstanding links), or random per process in open mode.
 */
export function defaultAnswerSecret(apiKeys: readonly string[]): string {
  if (apiKeys.length === 0) return randomBytes(32).toString('base64url')
  const hash = createHash('sha256').update('zidane-gateway/answer-secret/v1')
  for (const key of [...apiKeys].sort()) hash.update('\n').update(key)
  return hash.digest('base64url')
}

function answerSecret(env: NodeJS.ProcessEnv, apiKeys: readonly string[]): string {
  const configured = nonEmpty(env.GATEWAY_ANSWER_SECRET)
  if (configured === undefined) return defaultAnswerSecret(apiKeys)
  if (configured.length < MIN_SECRET_LENGTH) throw new GatewayConfigError(`GATEWAY_ANSWER_SECRET must be at least ${MIN_SECRET_LENGTH} characters.`)
  return configured
}

function defaultPublicUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')
}

function nonEmpty(value: string | undefined): string | undefined {
  return value?.trim() || undefined
}

function integerVariable(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new GatewayConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}".`)
  return value
}

function urlVariable(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = nonEmpty(env[name]) ?? fallback
  const url = URL.parse(raw)
  if (url === null) throw new GatewayConfigError(`${name} must be an absolute http(s) URL, got "${raw}".`)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayConfigError(`${name} must be an http(s) URL, got "${raw}".`)
  return raw.replace(/\/+$/, '')
}

/** The deployment's model catalog; a `ZIDANE_PROVIDERS` the services could not use either is a configuration error. */
function modelsOf(env: NodeJS.ProcessEnv): ModelCatalog {
  try {
    return deploymentModels(env).catalog
  } catch (error) {
    throw new GatewayConfigError(error instanceof Error ? error.message : String(error))
  }
}
