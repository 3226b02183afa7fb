import { createHash, randomBytes } from 'node:crypto'
import { DEFAULT_LIVE_REFRESH_MS } from './live-replicas'
import { DEFAULT_FEED_OPTIONS, MAX_WATCH_TIMEOUT_MS } from './session-feeds'
import { DEFAULT_TENANT_LIMITS, type TenantLimits } from './tenant-limits'

/** Everything the gateway needs to run. Restate is reached only through these URLs (tests point them anywhere). */
export interface GatewayConfig {
  /** API keys; each is a tenant. Empty only in open mode. */
  apiKeys: readonly string[]
  /** Open dev mode: no auth, every caller is tenant `open`. Only when no keys are configured. */
  open: boolean
  /** Restate ingress base URL, without a trailing slash. */
  restateIngressUrl: string
  /** Restate admin API base URL, without a trailing slash. */
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
   * The services' live hubs, the source of `model:delta` events on the event stream, with the shared
   * `ZIDANE_LIVE_TOKEN`: the fixed `urls` (`ZIDANE_LIVE_URLS`, one per replica), or else those the replicas registered
   * in Restate, read at `registryUrl` every `refreshMs` (`ZIDANE_LIVE_REFRESH_MS`). Absent: durable events only.
   */
  live?: { token: string; urls?: string[]; registryUrl?: string; refreshMs?: number }
  /**
   * Longest a viewer's shared watch stays parked in Restate before it is renewed (`GATEWAY_EVENT_WATCH_MS`, default
   * and most 240000): an idle followed session costs three short invocations per period (the watch, its subscribe and
   * its unsubscribe), whatever the number of its viewers.
   */
  eventWatchMs?: number
  /**
   * Longest one held call of `?wait=true` (its admission, then its attach) lasts before it is renewed (default and most
   * 240000, see `MAX_HOLD_MS`); tests shorten it. The request itself waits until the run ends.
   */
  attachTimeoutMs?: number
  /**
   * How long a prompt, a message or an answer waits for the services to answer before it is answered 202 without them
   * (down or restarting: Restate keeps the request and runs it when they are back). Default 10000 (answers 5000);
   * tests shorten it.
   */
  servicesWaitMs?: number
  /** Fastify logger switch; `server.ts` turns it on, tests leave it off. */
  logger?: boolean
  /** Fastify log level when the logger is on (`LOG_LEVEL`, default `info`: one line per request). */
  logLevel?: string
}

/** Thrown when the environment does not describe a runnable gateway; the message says what to set. */
export class GatewayConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'GatewayConfigError'
  }
}

const MIN_SECRET_LENGTH = 16
const ONE_MIB = 1024 * 1024

/** The shortest API key the gateway accepts: shorter keys are guessable. */
export const MIN_API_KEY_LENGTH = 16

/** Default of {@link GatewayConfig.requestTimeoutMs}: 30 s to send a request (not to get the answer). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/** Throws {@link GatewayConfigError} when a key is shorter than {@link MIN_API_KEY_LENGTH} (the key itself is not printed). */
export function checkApiKeyLengths(apiKeys: readonly string[]): void {
  const short = apiKeys.findIndex((key) => key.length < MIN_API_KEY_LENGTH)
  if (short < 0) return
  throw new GatewayConfigError(
    `API key ${short + 1} of GATEWAY_API_KEYS has ${apiKeys[short]?.length ?? 0} characters; every key needs at least ${MIN_API_KEY_LENGTH} (generate one with: openssl rand -hex 24).`,
  )
}

/**
 * Reads the gateway configuration from environment variables (see `ingress-gateway/README.md`). Throws
 * {@link GatewayConfigError} when there are no API keys and `GATEWAY_OPEN=1` is not set, or when a value is malformed.
 */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const apiKeys = (env.GATEWAY_API_KEYS ?? '').split(',').map((key) => key.trim()).filter((key) => key !== '')
  const open = apiKeys.length === 0 && env.GATEWAY_OPEN === '1'
  if (apiKeys.length === 0 && !open) {
    throw new GatewayConfigError('No API keys: set GATEWAY_API_KEYS=<key>[,<key>...], or GATEWAY_OPEN=1 to run without auth (development only).')
  }
  checkApiKeyLengths(apiKeys)
  const host = nonEmpty(env.GATEWAY_HOST) ?? '127.0.0.1'
  const port = integerVariable(env, 'GATEWAY_PORT', 3000, 0, 65535)
  const restateIngressUrl = urlVariable(env, 'RESTATE_INGRESS_URL', 'http://127.0.0.1:8080')
  return {
    apiKeys,
    open,
    restateIngressUrl,
    restateAdminUrl: urlVariable(env, 'RESTATE_ADMIN_URL', 'http://127.0.0.1:9070'),
    port,
    host,
    publicUrl: urlVariable(env, 'GATEWAY_PUBLIC_URL', defaultPublicUrl(host, port)),
    answerSecret: answerSecret(env, apiKeys),
    bodyLimitBytes: integerVariable(env, 'GATEWAY_BODY_LIMIT_BYTES', ONE_MIB, 1, Number.MAX_SAFE_INTEGER),
    requestTimeoutMs: integerVariable(env, 'GATEWAY_REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1, 3_600_000),
    limits: tenantLimits(env),
    eventWatchMs: integerVariable(env, 'GATEWAY_EVENT_WATCH_MS', DEFAULT_FEED_OPTIONS.watchTimeoutMs, 1_000, MAX_WATCH_TIMEOUT_MS),
    ...liveHubs(env, restateIngressUrl),
  }
}

/** Live deltas need the token; the hubs are the fixed `ZIDANE_LIVE_URLS`, or else those registered in Restate. */
function liveHubs(env: NodeJS.ProcessEnv, registryUrl: string): Pick<GatewayConfig, 'live'> {
  const urls = (nonEmpty(env.ZIDANE_LIVE_URLS) ?? '').split(',').map((url) => url.trim()).filter((url) => url !== '')
  const token = nonEmpty(env.ZIDANE_LIVE_TOKEN)
  if (token === undefined && urls.length > 0) throw new GatewayConfigError('ZIDANE_LIVE_URLS is set without ZIDANE_LIVE_TOKEN, the token the services\' live hubs require.')
  if (token === undefined) return {}
  if (urls.length > 0) return { live: { urls: urls.map((url) => urlVariable({ ZIDANE_LIVE_URLS: url }, 'ZIDANE_LIVE_URLS', url)), token } }
  return { live: { token, registryUrl, refreshMs: integerVariable(env, 'ZIDANE_LIVE_REFRESH_MS', DEFAULT_LIVE_REFRESH_MS, 100, 600_000) } }
}

function tenantLimits(env: NodeJS.ProcessEnv): TenantLimits {
  const max = 1_000_000
  return {
    maxConcurrentRuns: integerVariable(env, 'GATEWAY_MAX_CONCURRENT_RUNS', DEFAULT_TENANT_LIMITS.maxConcurrentRuns, 1, max),
    maxEventStreams: integerVariable(env, 'GATEWAY_MAX_EVENT_STREAMS', DEFAULT_TENANT_LIMITS.maxEventStreams, 1, max),
    requestsPerSecond: integerVariable(env, 'GATEWAY_RATE_PER_SECOND', DEFAULT_TENANT_LIMITS.requestsPerSecond, 1, max),
    requestBurst: integerVariable(env, 'GATEWAY_RATE_BURST', DEFAULT_TENANT_LIMITS.requestBurst, 1, max),
  }
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

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
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
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new GatewayConfigError(`${name} must be an absolute http(s) URL, got "${raw}".`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayConfigError(`${name} must be an http(s) URL, got "${raw}".`)
  return raw.replace(/\/+$/, '')
}
