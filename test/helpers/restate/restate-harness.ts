import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import http2 from 'node:http2'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as restate from '@restatedev/restate-sdk'
import * as clients from '@restatedev/restate-sdk-clients'
import { afterEach } from 'vitest'
import { restateServerBinary } from '../../../scripts/stack/restate-binary'
import { freePort } from '../../../scripts/stack/free-port'
import { registerDeployment } from '../../../scripts/stack/register-deployment'
import { restateListenEnv, restateUrls, waitForRestate } from '../../../scripts/stack/restate-server'
import { stopProcess } from '../../../scripts/stack/supervisor'

/** Options of `startRestateHarness`. */
export interface RestateHarnessOptions {
  /** Served in-process over HTTP/2 and registered as one deployment. */
  services?: readonly restate.ServiceDefinition<string, unknown>[] | readonly unknown[]
  /** Suspend on every await (`RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT=0s`): every step boundary replays. */
  alwaysReplay?: boolean
  /** Extra server environment. */
  env?: Record<string, string>
}

/** Response of a raw ingress request. */
export interface IngressResponse<T = unknown> { status: number; body: T; invocationId: string | undefined }

/** A running restate-server (plus, optionally, an in-process endpoint) for one test file. */
export interface RestateHarness {
  readonly ingressUrl: string
  readonly adminUrl: string
  /** Typed ingress client (`@restatedev/restate-sdk-clients`). */
  readonly ingress: clients.Ingress
  /** URI of the in-process endpoint, when services were given. */
  readonly endpointUri: string | undefined
  registerDeployment(uri: string): Promise<void>
  /** POST `/{path}` with a JSON body; resolves with the status and parsed body. */
  call<T = unknown>(route: string, body?: unknown, headers?: Record<string, string>): Promise<IngressResponse<T>>
  /** POST `/{path}/send`; resolves with the invocation id. */
  send(route: string, body?: unknown, headers?: Record<string, string>): Promise<string>
  /** GET `/restate/invocation/{id}/attach`. */
  attach<T = unknown>(invocationId: string): Promise<IngressResponse<T>>
  /** Admin SQL query, rows as JSON. */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>
  /** `PATCH /invocations/{id}/cancel`; resolves with the HTTP status. */
  cancel(invocationId: string): Promise<number>
  /** `POST /restate/awakeables/{id}/resolve`; resolves with the HTTP status. */
  resolveAwakeable(id: string, value: unknown): Promise<number>
  /** Polls `predicate` until it returns a truthy value or `timeoutMs` passes. */
  waitFor<T>(predicate: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs?: number, what?: string): Promise<T>
  /**
   * Requests the in-process endpoint got for `service/handler` so far (each invocation of it, and each time one that
   * had suspended resumed): what a test counts to show how many invocations a path makes.
   */
  endpointRequests(service: string, handler: string): number
  /** Everything the server printed so far. */
  logs(): string
  stop(): Promise<void>
}

export { freePort }

const sleepMs = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** Polls until `predicate` is truthy. */
export async function waitFor<T>(predicate: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const value = await predicate()
      if (value) return value
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleepMs(50)
  }
}

/**
 * Starts a restate-server from npm on free loopback ports with a temporary base dir and a fast retry policy,
 * serves `services` in-process and registers them. `RESTATE_TEST_BACKEND=testcontainers` is refused unless
 * `@restatedev/restate-sdk-testcontainers` is installed.
 */
export async function startRestateHarness(options: RestateHarnessOptions = {}): Promise<RestateHarness> {
  if (process.env.RESTATE_TEST_BACKEND === 'testcontainers') return startTestcontainersHarness(options)
  const [adminPort, ingressPort, fabricPort] = [await freePort(), await freePort(), await freePort()]
  const baseDir = await mkdtemp(path.join(tmpdir(), 'zidane-restate-'))
  let output = ''
  const server = spawn(restateServerBinary(), [], {
    env: {
      ...process.env,
      RESTATE_BASE_DIR: baseDir,
      RESTATE_NODE_NAME: 'zidane-test',
      RESTATE_CLUSTER_NAME: `zidane-test-${fabricPort}`,
      ...restateListenEnv({ adminPort, ingressPort, fabricPort }),
      RESTATE_DEFAULT_NUM_PARTITIONS: '2',
      RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '50ms',
      RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '500ms',
      RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: 'unlimited',
      RESTATE_LOG_FORMAT: 'compact',
      ...(options.alwaysReplay ? { RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT: '0s' } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  server.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const { adminUrl, ingressUrl } = restateUrls({ adminPort, ingressPort })
  const endpointRef: { server?: http2.Http2Server } = {}
  const stop = async (): Promise<void> => {
    endpointRef.server?.close()
    await stopProcess(server)
    await rm(baseDir, { recursive: true, force: true })
  }
  try {
    await waitForRestate({ adminUrl, ingressUrl }, 30_000)
  } catch (error) {
    await stop()
    throw new Error(`restate-server did not become healthy:\n${output}`, { cause: error })
  }
  const requests = new Map<string, number>()
  const harness = buildHarness(adminUrl, ingressUrl, () => output, stop, (service, handler) => requests.get(`/invoke/${service}/${handler}`) ?? 0)
  if (!options.services || options.services.length === 0) return harness
  const logger = (params: { level?: unknown }, message?: unknown, ...rest: unknown[]): void => {
    output += `[sdk ${String(params.level)}] ${[message, ...rest].map(part => (part instanceof Error ? part.stack : String(part))).join(' ')}\n`
  }
  const endpoint = http2.createServer(restate.createEndpointHandler({ services: options.services as restate.ServiceDefinition<string, unknown>[], logger }))
  endpointRef.server = endpoint
  endpoint.on('request', (request: http2.Http2ServerRequest) => { requests.set(request.url, (requests.get(request.url) ?? 0) + 1) })
  const endpointPort = await new Promise<number>(resolve => {
    endpoint.listen(0, '127.0.0.1', () => resolve((endpoint.address() as net.AddressInfo).port))
  })
  const endpointUri = `http://127.0.0.1:${endpointPort}`
  await harness.registerDeployment(endpointUri)
  return { ...harness, endpointUri }
}

function buildHarness(adminUrl: string, ingressUrl: string, logs: () => string, stop: () => Promise<void>, endpointRequests: RestateHarness['endpointRequests']): RestateHarness {
  const raw = async <T>(url: string, init: RequestInit): Promise<IngressResponse<T>> => {
    const response = await fetch(url, init)
    const text = await response.text()
    let body: unknown = text
    try { body = text ? JSON.parse(text) : undefined } catch { /* not JSON */ }
    return { status: response.status, body: body as T, invocationId: response.headers.get('x-restate-id') ?? undefined }
  }
  const jsonHeaders = (headers: Record<string, string> = {}): Record<string, string> => ({ 'content-type': 'application/json', ...headers })
  return {
    adminUrl,
    ingressUrl,
    endpointUri: undefined,
    ingress: clients.connect({ url: ingressUrl }),
    registerDeployment: uri => registerDeployment(adminUrl, uri),
    call: (route, body, headers) => raw(`${ingressUrl}/${route}`, { method: 'POST', headers: jsonHeaders(headers), body: JSON.stringify(body ?? null) }),
    async send(route, body, headers) {
      const response = await raw<{ invocationId: string }>(`${ingressUrl}/${route}/send`, { method: 'POST', headers: jsonHeaders(headers), body: JSON.stringify(body ?? null) })
      if (response.status !== 202 && response.status !== 200) throw new Error(`send ${route} failed: ${response.status} ${JSON.stringify(response.body)}`)
      return response.body.invocationId
    },
    attach: id => raw(`${ingressUrl}/restate/invocation/${id}/attach`, { method: 'GET' }),
    async query<T>(sql: string) {
      const response = await fetch(`${adminUrl}/query`, { method: 'POST', headers: jsonHeaders({ accept: 'application/json' }), body: JSON.stringify({ query: sql }) })
      if (!response.ok) throw new Error(`query failed: ${response.status} ${await response.text()}`)
      return ((await response.json()) as { rows: T[] }).rows
    },
    async cancel(id) {
      return (await fetch(`${adminUrl}/invocations/${id}/cancel`, { method: 'PATCH' })).status
    },
    async resolveAwakeable(id, value) {
      return (await fetch(`${ingressUrl}/restate/awakeables/${id}/resolve`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(value) })).status
    },
    waitFor,
    endpointRequests,
    logs,
    stop,
  }
}


interface TestcontainersEnvironment { baseUrl(): string; adminAPIBaseUrl(): string; stop(): Promise<void> }
interface TestcontainersModule { RestateTestEnvironment: { start(options: { services: unknown[]; alwaysReplay?: boolean }): Promise<TestcontainersEnvironment> } }

/**
 * The Docker backend (`RESTATE_TEST_BACKEND=testcontainers`): the official Restate image through
 * `@restatedev/restate-sdk-testcontainers`, which serves `options.services` itself and registers them. Endpoints a test
 * registers by URI are rewritten from 127.0.0.1 to `host.docker.internal`, where the container sees the host. Needs the
 * package (not a dependency: `npm install -D @restatedev/restate-sdk-testcontainers`) and a Docker engine.
 */
async function startTestcontainersHarness(options: RestateHarnessOptions): Promise<RestateHarness> {
  const specifier = '@restatedev/restate-sdk-testcontainers'
  let testcontainers: TestcontainersModule
  try {
    testcontainers = (await import(specifier)) as TestcontainersModule
  } catch (error) {
    throw new Error('RESTATE_TEST_BACKEND=testcontainers needs `@restatedev/restate-sdk-testcontainers` (npm install -D) and a Docker engine. Unset RESTATE_TEST_BACKEND to use the local restate-server binary.', { cause: error })
  }
  const environment = await testcontainers.RestateTestEnvironment.start({ services: [...(options.services ?? [])], alwaysReplay: options.alwaysReplay ?? false })
  const harness = buildHarness(environment.adminAPIBaseUrl(), environment.baseUrl(), () => '(testcontainers backend: read the container logs with docker logs)', () => environment.stop(), () => { throw new Error('the testcontainers backend serves the endpoint itself: its requests are not counted') })
  const register = harness.registerDeployment.bind(harness)
  return { ...harness, registerDeployment: uri => register(uri.replace('127.0.0.1', 'host.docker.internal')) }
}

/** Prints the server logs after every failed test of the file. */
export function printLogsOnFailure(harness: () => RestateHarness | undefined): void {
  afterEach(context => {
    if (context.task.result?.state !== 'fail') return
    const logs = harness()?.logs() ?? ''
    console.error(`---- restate-server logs (${context.task.name}) ----\n${logs.slice(-20_000)}`)
  })
}

/** The two server modes every integration scenario runs in. */
export const REPLAY_MODES = [{ mode: 'normal', alwaysReplay: false }, { mode: 'always-replay', alwaysReplay: true }] as const
