import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import http2 from 'node:http2'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as restate from '@restatedev/restate-sdk'
import { freePort } from '../../scripts/stack/free-port'
import { registerDeployment } from '../../scripts/stack/register-deployment'
import { restateServerBinary } from '../../scripts/stack/restate-binary'
import { restateListenEnv, restateUrls, waitForRestate } from '../../scripts/stack/restate-server'
import { stopProcess } from '../../scripts/stack/supervisor'

/**
 * The retry policy of the bench server: first retry after 50 ms, doubling, capped at 500 ms, never paused (the same
 * policy as the integration-test harness; `restate.toml` ships 100 ms doubling to 2 s). It sets how soon a restarted
 * services process is retried, so it bounds the kill-to-resumed figure.
 */
export const BENCH_RETRY_POLICY = { initialInterval: '50ms', exponentiationFactor: '2', maxInterval: '500ms' }

/** A restate-server started for the bench (free loopback ports, a temporary base dir). */
export interface BenchServer {
  readonly ingressUrl: string
  readonly adminUrl: string
  /** The node's Prometheus metrics (e.g. `restate_invoker_concurrency_slots_acquired`, invocations started). */
  readonly metricsUrl: string
  readonly process: ChildProcess
  register(uri: string): Promise<void>
  /** Serves `services` in this process over HTTP/2 (bidirectional streaming) and registers them. */
  serve(services: readonly (restate.VirtualObjectDefinition<string, unknown> | restate.ServiceDefinition<string, unknown>)[]): Promise<string>
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>
  /** POST to the ingress; throws on a non-2xx status. Returns the parsed body and the invocation id. */
  call<T>(route: string, body: unknown): Promise<{ body: T; invocationId: string }>
  stop(): Promise<void>
}

/** Starts `node_modules/.bin/restate-server` with the bench retry policy and waits until admin and ingress are healthy. */
export async function startBenchServer(extraEnv: Record<string, string> = {}): Promise<BenchServer> {
  const [adminPort, ingressPort, fabricPort] = [await freePort(), await freePort(), await freePort()]
  const baseDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-restate-'))
  const child = spawn(restateServerBinary(), ['--no-logo'], {
    env: {
      ...process.env,
      RESTATE_BASE_DIR: baseDir,
      RESTATE_NODE_NAME: 'zidane-bench',
      RESTATE_CLUSTER_NAME: `zidane-bench-${fabricPort}`,
      ...restateListenEnv({ adminPort, ingressPort, fabricPort }),
      RESTATE_DEFAULT_NUM_PARTITIONS: '4',
      RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: BENCH_RETRY_POLICY.initialInterval,
      RESTATE_DEFAULT_RETRY_POLICY__EXPONENTIATION_FACTOR: BENCH_RETRY_POLICY.exponentiationFactor,
      RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: BENCH_RETRY_POLICY.maxInterval,
      RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: 'unlimited',
      RESTATE_LOG_FILTER: 'error',
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let logs = ''
  child.stderr?.on('data', (chunk: Buffer) => { logs = (logs + chunk.toString()).slice(-20_000) })
  const { adminUrl, ingressUrl } = restateUrls({ adminPort, ingressPort })
  const endpoints: http2.Http2Server[] = []
  const stop = async (): Promise<void> => {
    for (const endpoint of endpoints) endpoint.close()
    await stopProcess(child)
    await rm(baseDir, { recursive: true, force: true })
  }
  try {
    await waitForRestate({ adminUrl, ingressUrl }, 30_000, 50)
  } catch (error) {
    await stop()
    throw new Error(`restate-server did not become healthy:\n${logs}`, { cause: error })
  }
  const server: BenchServer = {
    ingressUrl,
    adminUrl,
    metricsUrl: `http://127.0.0.1:${fabricPort}/metrics`,
    process: child,
    register: uri => registerDeployment(adminUrl, uri),
    async serve(services) {
      const endpoint = http2.createServer(restate.createEndpointHandler({ services: [...services], logger: () => undefined }))
      endpoints.push(endpoint)
      const port = await new Promise<number>(resolve => { endpoint.listen(0, '127.0.0.1', () => resolve((endpoint.address() as net.AddressInfo).port)) })
      const uri = `http://127.0.0.1:${port}`
      await server.register(uri)
      return uri
    },
    async query<T>(sql: string) {
      const response = await fetch(`${adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
      if (!response.ok) throw new Error(`query failed: ${response.status} ${await response.text()}`)
      return ((await response.json()) as { rows: T[] }).rows
    },
    async call<T>(route: string, body: unknown) {
      const response = await fetch(`${ingressUrl}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const text = await response.text()
      if (!response.ok) throw new Error(`${route} answered ${response.status}: ${text.slice(0, 500)}`)
      return { body: JSON.parse(text) as T, invocationId: response.headers.get('x-restate-id') ?? '' }
    },
    stop,
  }
  return server
}
