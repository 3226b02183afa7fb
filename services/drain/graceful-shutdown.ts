import type { Http2Server, ServerHttp2Session } from 'node:http2'
import { performance } from 'node:perf_hooks'
import { stopRunningCommands } from 'zidane/tools'
import type { AttemptDrain } from './attempt-drain'

/** What `installGracefulShutdown` stops, and how long it waits. */
export interface GracefulShutdownOptions {
  server: Http2Server
  drain: AttemptDrain
  /** How long running steps may take to finish after the signal; then their commands are killed. */
  graceMs: number
  /** Sends what the process still holds for others (the traces' batch) before it exits; waited for at most {@link FLUSH_MS}. */
  flush?: () => Promise<void>
  log?: (line: string) => void
  exit?: (code: number) => never
}

/** Longest wait for `flush` at exit. */
export const FLUSH_MS = 2_000

/**
 * On SIGTERM or SIGINT: stop taking work (the server stops accepting connections and new requests get 503, so Restate
 * sends new attempts elsewhere or later), let the running steps finish and hand their results to Restate
 * (`AttemptDrain`), then close the HTTP/2 sessions, stop the shell commands left and exit 0. After `graceMs` it stops
 * waiting. A second signal stops at once. Call it before `listen`, so every session is seen.
 *
 * No GOAWAY goes out while attempts are open: Restate's HTTP/2 client, when it sends a new request on a connection
 * just as that connection's GOAWAY arrives, drops the whole connection, and with it the streams of running steps
 * (seen under load: a shell call cut off 60 ms into the drain, its result lost). A 503 per new request is enough.
 */
export function installGracefulShutdown(options: GracefulShutdownOptions): void {
  const log = options.log ?? ((line: string) => console.log(line))
  const exit = options.exit ?? ((code: number) => process.exit(code))
  const sessions = new Set<ServerHttp2Session>()
  options.server.on('session', session => {
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
  })
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log(`zidane services: ${signal} again, stopping now (running steps: ${options.drain.runningSteps()})`)
      stopRunningCommands()
      exit(0)
    }
    stopping = true
    void shutdown(signal, options, sessions, log).then(() => {
      stopRunningCommands()
      exit(0)
    })
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal))
}

async function shutdown(signal: NodeJS.Signals, options: GracefulShutdownOptions, sessions: Set<ServerHttp2Session>, log: (line: string) => void): Promise<void> {
  const { drain, graceMs } = options
  const startedMs = performance.now()
  log(`zidane services: ${signal}, draining (running steps: ${drain.runningSteps()}, open attempts: ${drain.openAttempts()}, grace ${graceMs} ms)`)
  options.server.close()
  const drained = drain.drain()
  let timer: NodeJS.Timeout | undefined
  const graceOver = new Promise<false>(resolve => { timer = setTimeout(() => resolve(false), graceMs) })
  const finished = await Promise.race([drained.then(() => true as const), graceOver])
  clearTimeout(timer)
  for (const session of sessions) session.close()
  await flushBounded(options.flush)
  const elapsedMs = Math.round(performance.now() - startedMs)
  log(finished
    ? `zidane services: drained in ${elapsedMs} ms, exiting`
    : `zidane services: grace of ${graceMs} ms over (running steps: ${drain.runningSteps()}, open attempts: ${drain.openAttempts()}), stopping their commands and exiting`)
}

/** Runs `flush`, for at most {@link FLUSH_MS}; its failure is not the shutdown's. */
async function flushBounded(flush: (() => Promise<void>) | undefined): Promise<void> {
  if (!flush) return
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<void>(resolve => { timer = setTimeout(resolve, FLUSH_MS) })
  await Promise.race([flush().catch(() => undefined), timeout])
  clearTimeout(timer)
}
