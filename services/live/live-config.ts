/** Where the services' live hub listens and the token it requires. */
export interface LiveConfig {
  /** `ZIDANE_LIVE_PORT`; default the services port + 100 (9180). */
  port: number
  /** `ZIDANE_LIVE_HOST`; default the loopback interface: the hub is internal (the gateway reaches it over `ZIDANE_LIVE_URLS`). */
  host: string
  /** `ZIDANE_LIVE_TOKEN`; the hub does not start without it. */
  token: string | undefined
}

/** Reads the live hub's settings from the environment. */
export function loadLiveConfig(env: NodeJS.ProcessEnv = process.env): LiveConfig {
  const servicesPort = Number(env.SERVICES_PORT ?? 9080)
  const port = Number(env.ZIDANE_LIVE_PORT ?? servicesPort + 100)
  const token = env.ZIDANE_LIVE_TOKEN
  return { port: Number.isInteger(port) && port > 0 && port < 65536 ? port : 9180, host: env.ZIDANE_LIVE_HOST ?? '127.0.0.1', token: token === '' ? undefined : token }
}
