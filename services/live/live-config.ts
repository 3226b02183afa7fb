import { hostname } from 'node:os'
import { MAX_LEASE_MS, MIN_LEASE_MS } from './replica-registry-object'

/** Where the services' live hub listens, the token it requires, and how it tells the gateways where it is. */
export interface LiveConfig {
  /** `ZIDANE_LIVE_PORT`; default the services port + 100 (9180). */
  port: number
  /** `ZIDANE_LIVE_HOST`; default the loopback interface: the hub is internal (the gateways find it in Restate). */
  host: string
  /** `ZIDANE_LIVE_TOKEN`; the hub does not start without it. */
  token: string | undefined
  /**
   * `ZIDANE_LIVE_ADVERTISED_URL`: the hub's URL as the gateways reach it, which the process registers in Restate.
   * Default `http://<host>:<port>`, with the machine's host name for a hub that binds every interface.
   */
  advertisedUrl: string
  /** `ZIDANE_LIVE_LEASE_MS` (default 60000): how long a registration holds unrefreshed; refreshed every third of it. */
  leaseMs: number
}

/**
 * Default of {@link LiveConfig.leaseMs}: 60 s, refreshed every 20 s (three short invocations a minute per replica). A
 * replica killed without deregistering drops out of the registry within it, and out of a gateway at its watch's next
 * renewal (`ZIDANE_LIVE_REFRESH_MS`, 60 s).
 */
export const DEFAULT_LIVE_LEASE_MS = 60_000

/** Reads the live hub's settings from the environment. */
export function loadLiveConfig(env: NodeJS.ProcessEnv = process.env): LiveConfig {
  const servicesPort = Number(env.SERVICES_PORT ?? 9080)
  const requested = Number(env.ZIDANE_LIVE_PORT ?? servicesPort + 100)
  const port = Number.isInteger(requested) && requested > 0 && requested < 65536 ? requested : 9180
  const host = env.ZIDANE_LIVE_HOST ?? '127.0.0.1'
  const token = env.ZIDANE_LIVE_TOKEN
  const advertisedUrl = (env.ZIDANE_LIVE_ADVERTISED_URL || defaultUrl(host, port)).replace(/\/+$/, '')
  const lease = Number(env.ZIDANE_LIVE_LEASE_MS || DEFAULT_LIVE_LEASE_MS)
  const leaseMs = Number.isInteger(lease) ? Math.min(MAX_LEASE_MS, Math.max(MIN_LEASE_MS, lease)) : DEFAULT_LIVE_LEASE_MS
  return { port, host, token: token === '' ? undefined : token, advertisedUrl, leaseMs }
}

function defaultUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? hostname() : host
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`
}
