import { buildGateway } from './app'
import { GatewayConfigError, loadGatewayConfig } from './config'

const SHUTDOWN_GRACE_MS = 10_000
/** After the grace period and this much more, the process exits whatever is still closing: a stop is bounded. */
const SHUTDOWN_HARD_LIMIT_MS = SHUTDOWN_GRACE_MS + 5_000

/** Starts the gateway from environment variables: load config, build, listen, stop cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = { ...loadGatewayConfig(process.env), logger: true, logLevel: process.env.LOG_LEVEL ?? 'info' }
  const app = await buildGateway(config)
  const address = await app.listen({ port: config.port, host: config.host })
  const mode = config.open ? 'OPEN mode (no auth; development only)' : `${config.apiKeys.length} API key(s)`
  if (process.env.GATEWAY_OPEN === '1' && !config.open) app.log.warn('GATEWAY_OPEN=1 is ignored because GATEWAY_API_KEYS is set')
  process.stdout.write(`zidane gateway listening on ${address} (${mode}); public URL ${config.publicUrl}; docs ${config.publicUrl}/docs\n`)
  let closing = false
  const stop = (signal: NodeJS.Signals): void => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    // In-flight requests get a grace period (a `?wait=true` request can last as long as a run), then are cut.
    setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref()
    setTimeout(() => {
      process.stderr.write(`zidane gateway: still closing ${SHUTDOWN_HARD_LIMIT_MS} ms after ${signal}, exiting\n`)
      process.exit(1)
    }, SHUTDOWN_HARD_LIMIT_MS).unref()
    app.close().then(() => process.exit(0), (error: unknown) => {
      app.log.error({ err: error }, 'error while closing')
      process.exit(1)
    })
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  const message = error instanceof GatewayConfigError ? `gateway configuration error: ${error.message}` : `gateway failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`
  process.stderr.write(`${message}\n`)
  process.exit(1)
})
