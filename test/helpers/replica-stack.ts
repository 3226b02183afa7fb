import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startTcpBalancer } from '../../scripts/cluster/tcp-balancer'
import type { TcpBalancer } from '../../scripts/cluster/tcp-balancer'
import { acceptsConnections } from '../../scripts/stack/check-ports'
import { freePort } from '../../scripts/stack/free-port'
import { stopProcess } from '../../scripts/stack/supervisor'
import { isHealthy, waitUntil } from '../../scripts/stack/wait'
import { startRestateHarness } from './restate/restate-harness'
import type { RestateHarness } from './restate/restate-harness'

/** One services replica of a {@link ReplicaStack}: its ports, its process (when running) and what it printed. */
export interface ServicesReplica {
  readonly name: string
  readonly port: number
  readonly livePort: number
  /** The hub URL it registers. */
  readonly liveUrl: string
  process(): ChildProcess | undefined
  output(): string
  /** Starts it (again, on the same ports) and resolves once it listens. */
  start(): Promise<void>
  /** SIGKILL: no drain, no deregistration. */
  kill(): Promise<void>
  /** SIGTERM: drains, deregisters its hub, exits. */
  stop(): Promise<void>
}

/**
 * A Restate server, two services replicas behind a round-robin TCP balancer (the one deployment Restate knows), and a
 * gateway: as `npm run start:cluster` wires the services, on one Restate node. No `ZIDANE_LIVE_URLS` anywhere.
 */
export interface ReplicaStack {
  restate: RestateHarness
  replicas: [ServicesReplica, ServicesReplica]
  balancer: TcpBalancer
  gatewayUrl: string
  apiKey: string
  liveToken: string
  /** The gateway's and every replica's output. */
  output(): string
  destroy(): Promise<void>
}

const ROOT = process.cwd()
const API_KEY = 'replica-stack-key-0123456789'
const LIVE_TOKEN = 'replica-stack-live-token-0123456789'

function tsx(script: string): string[] {
  return ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href, join(ROOT, script)]
}

/** Starts the stack; `servicesEnv` reaches both replicas (the model, the lease), `gatewayEnv` the gateway. */
export async function startReplicaStack(servicesEnv: Record<string, string>, gatewayEnv: Record<string, string> = {}): Promise<ReplicaStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-replicas-'))
  const restate = await startRestateHarness()
  const gatewayOutput: string[] = []
  const replicas = [await replica('services-1', restate, dataDir, servicesEnv), await replica('services-2', restate, dataDir, servicesEnv)] as [ServicesReplica, ServicesReplica]
  const balancer = await startTcpBalancer(replicas.map(each => each.port))
  let gateway: ChildProcess | undefined
  const destroy = async (): Promise<void> => {
    if (gateway) await stopProcess(gateway)
    for (const each of replicas) await each.kill()
    await balancer.close()
    await restate.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
  try {
    for (const each of replicas) await each.start()
    await restate.registerDeployment(`http://127.0.0.1:${balancer.port}`)
    const gatewayPort = await freePort()
    gateway = spawn(process.execPath, tsx('ingress-gateway/server.ts'), {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dataDir, GATEWAY_API_KEYS: API_KEY, GATEWAY_PORT: String(gatewayPort), GATEWAY_HOST: '127.0.0.1', RESTATE_INGRESS_URL: restate.ingressUrl, RESTATE_ADMIN_URL: restate.adminUrl, ZIDANE_LIVE_TOKEN: LIVE_TOKEN, GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_RATE_BURST: '10000', LOG_LEVEL: 'warn', ...gatewayEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    keepOutput(gateway, line => gatewayOutput.push(`[gateway] ${line}`))
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`
    await waitUntil(() => isHealthy(`${gatewayUrl}/healthz`), 60_000, 'the gateway')
    return { restate, replicas, balancer, gatewayUrl, apiKey: API_KEY, liveToken: LIVE_TOKEN, output: () => [...gatewayOutput, ...replicas.map(each => each.output())].join('\n'), destroy }
  } catch (error) {
    await destroy()
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${replicas.map(each => each.output()).join('\n')}\n${gatewayOutput.join('\n')}`, { cause: error })
  }
}

async function replica(name: string, restate: RestateHarness, dataDir: string, servicesEnv: Record<string, string>): Promise<ServicesReplica> {
  const [port, livePort] = [await freePort(), await freePort()]
  const lines: string[] = []
  let child: ChildProcess | undefined
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    SERVICES_HOST: '127.0.0.1',
    SERVICES_PORT: String(port),
    ZIDANE_LIVE_PORT: String(livePort),
    ZIDANE_LIVE_TOKEN: LIVE_TOKEN,
    RESTATE_INGRESS_URL: restate.ingressUrl,
    ZIDANE_WORKSPACE_ROOT: join(dataDir, 'workspaces'),
    ZIDANE_COMMANDS_DIR: join(dataDir, name, 'running-commands'),
    ZIDANE_SANDBOX: 'off',
    ZIDANE_DISABLE_TOOLS: 'shell',
    // The SDK's "Starting invocation" lines tell which replica runs a session.
    RESTATE_LOGGING: 'debug',
    ...servicesEnv,
  }
  const exited = async (): Promise<void> => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    await new Promise(resolve => running.once('exit', resolve))
  }
  return {
    name,
    port,
    livePort,
    liveUrl: `http://127.0.0.1:${livePort}`,
    process: () => child,
    output: () => lines.join('\n'),
    async start() {
      child = spawn(process.execPath, tsx('services/endpoint.ts'), { env, stdio: ['ignore', 'pipe', 'pipe'] })
      keepOutput(child, line => { lines.push(`[${name}] ${line}`); if (lines.length > 5_000) lines.shift() })
      await waitUntil(() => acceptsConnections(port), 60_000, `${name} to listen`)
    },
    async kill() {
      child?.kill('SIGKILL')
      await exited()
    },
    async stop() {
      child?.kill('SIGTERM')
      await exited()
    },
  }
}

function keepOutput(child: ChildProcess, keep: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let pending = ''
    stream?.setEncoding('utf8')
    stream?.on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) keep(line)
    })
  }
}
