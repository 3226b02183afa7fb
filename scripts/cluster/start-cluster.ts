import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { shutdownGraceMs } from '../../services/drain/shutdown-config'
import { shellPolicy } from '../../services/shell-policy'
import type { ShellStatus } from '../../services/shell-policy'
import { acceptsConnections, isPortFree, PortInUseError } from '../stack/check-ports'
import { ensureIdentityKeys } from '../stack/identity-keys'
import { isMultiTenant, servicesEnvironment, withoutVariables } from '../stack/process-env'
import { registerDeployment } from '../stack/register-deployment'
import { restateServerBinary } from '../stack/restate-binary'
import { restateListenEnv, restateUrls, waitForRestate } from '../stack/restate-server'
import { supervise } from '../stack/supervisor'
import type { ProcessHandle, SupervisedProcess } from '../stack/supervisor'
import { isHealthy, waitUntil } from '../stack/wait'
import { clusterPorts } from './cluster-config'
import type { ClusterConfig, NodePorts } from './cluster-config'
import { startSnapshotStore } from './snapshot-store'
import type { SnapshotStore } from './snapshot-store'
import { startTcpBalancer } from './tcp-balancer'
import type { TcpBalancer } from './tcp-balancer'

/** A running loopback cluster: what clients use (the front URLs) and every supervised process. */
export interface RunningCluster {
  /** The gateways' balancer: the one URL clients use. */
  gatewayUrl: string
  /** The Restate ingress and admin balancers (over the three nodes). */
  ingressUrl: string
  adminUrl: string
  /** `restate-1..3`, `services-1..2`, `gateway-1..2`, in start order. */
  processes: ProcessHandle[]
  /** Each node's own admin URL, in node order. */
  nodeAdminUrls: string[]
  snapshotStore: SnapshotStore
  /** The loopback balancers, for their connection counts. */
  balancers: { ingress: TcpBalancer; admin: TcpBalancer; services: TcpBalancer; gateway: TcpBalancer }
  /** Each node's fabric URL (its `/metrics` live there). */
  nodeFabricUrls: string[]
  shell: ShellStatus
  /** The supervised process named `name` (throws when there is none). */
  process(name: string): ProcessHandle
  /** Resolves once the process `name` answers again (its health check or port). */
  waitHealthy(name: string, timeoutMs: number): Promise<void>
  stop(): Promise<void>
}

/** Options of {@link startCluster}. */
export interface StartClusterOptions {
  /** Variables for every process (tests: faster retries, a fake model). */
  extraEnv?: NodeJS.ProcessEnv
  log?: (name: string, line: string) => void
  /** Filled as processes start, so a caller can stop them even while the cluster is still starting. */
  processes?: ProcessHandle[]
}

/** The sandbox's cgroup name when `ZIDANE_SANDBOX_CGROUP` is unset (as in `bubblewrapOptionsFrom`). */
const DEFAULT_SANDBOX_CGROUP = 'zidane-sandbox'
const CGROUP_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * The cgroup that holds the tenants' cgroups of services replica `index` (0-based): `<name>-services-<index + 1>`, the
 * name from `ZIDANE_SANDBOX_CGROUP` (shortened to fit 64 characters) or `zidane-sandbox`. Each replica stands for a
 * host of its own, as each container of docker-compose.cluster.yml has its own cgroups: a tenant's limits (512
 * processes, 2 GiB by default) hold per replica. Replicas that shared one tenant cgroup each sized their warm file
 * workers as if they had it alone; together they passed its process cap, and the kernel refused their workers'
 * threads (tool calls crashed or timed out after 20 s).
 */
export function replicaSandboxCgroup(configured: string | undefined, index: number): string {
  const suffix = `-services-${index + 1}`
  const name = configured !== undefined && CGROUP_NAME.test(configured) ? configured : DEFAULT_SANDBOX_CGROUP
  return `${name.slice(0, 64 - suffix.length)}${suffix}`
}

/** Runs a TypeScript entry in one Node process through tsx's loader, so signals reach the program itself. */
function tsx(rootDir: string, script: string): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', pathToFileURL(join(rootDir, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href, join(rootDir, script)] }
}

/** Throws {@link PortInUseError} for the first port of the cluster that is taken. */
async function checkClusterPorts(config: ClusterConfig): Promise<void> {
  for (const [port, variable] of clusterPorts(config)) {
    const host = variable === 'GATEWAY_PORT' && port === config.front.gatewayPort ? config.host : '127.0.0.1'
    if (!(await isPortFree(port, host))) throw new PortInUseError(port, variable)
  }
}

/** The deployment's workspace root id, generated once and kept in the data folder. */
async function workspaceRootId(dataDir: string): Promise<string> {
  const file = join(dataDir, 'workspace-root-id')
  if (!existsSync(file)) await writeFile(file, `zidane-${randomBytes(8).toString('hex')}\n`, { mode: 0o600 })
  return (await readFile(file, 'utf8')).trim()
}

function nodeEnv(config: ClusterConfig, node: NodePorts, index: number, base: NodeJS.ProcessEnv, store: SnapshotStore, identityKeyPath: string): NodeJS.ProcessEnv {
  return {
    ...withoutVariables(base, ['GATEWAY_', 'ANTHROPIC_']),
    RESTATE_LOG_FILTER: base.RESTATE_LOG_FILTER ?? 'warn,octocrab=off',
    RESTATE_NODE_NAME: `node-${index + 1}`,
    RESTATE_BASE_DIR: join(config.dataDir, 'nodes', `node-${index + 1}`),
    RESTATE_AUTO_PROVISION: index === 0 ? 'true' : 'false',
    RESTATE_METADATA_CLIENT__ADDRESSES: JSON.stringify(config.nodes.map(each => `http://127.0.0.1:${each.fabricPort}/`)),
    RESTATE_WORKER__SNAPSHOTS__AWS_ENDPOINT_URL: store.url,
    RESTATE_WORKER__SNAPSHOTS__AWS_ACCESS_KEY_ID: 'local',
    RESTATE_WORKER__SNAPSHOTS__AWS_SECRET_ACCESS_KEY: 'local',
    ...restateListenEnv(node),
    RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: identityKeyPath,
  }
}

/** The health check of each supervised process, by name. */
function healthChecks(config: ClusterConfig): Map<string, () => Promise<boolean>> {
  const checks = new Map<string, () => Promise<boolean>>()
  config.nodes.forEach((node, index) => checks.set(`restate-${index + 1}`, async () => (await isHealthy(`http://127.0.0.1:${node.adminPort}/health`)) && isHealthy(`http://127.0.0.1:${node.ingressPort}/restate/health`)))
  config.servicesPorts.forEach((port, index) => checks.set(`services-${index + 1}`, () => acceptsConnections(port)))
  config.gatewayPorts.forEach((port, index) => checks.set(`gateway-${index + 1}`, () => isHealthy(`http://${config.host}:${port}/healthz`)))
  return checks
}

/**
 * Starts the loopback cluster and resolves once every process answers: the snapshot store and the balancers
 * (in this process), three Restate nodes, two services replicas (the first writes the workspace root marker, the
 * second checks it), the deployment registered through the services balancer, and two gateways. Every process is
 * supervised and restarted when it dies; `onFatal` is called when one keeps exiting before its health check passes.
 */
export async function startCluster(config: ClusterConfig, onFatal: (reason: string) => void, options: StartClusterOptions = {}): Promise<RunningCluster> {
  const processes = options.processes ?? []
  const base = { ...process.env, ...options.extraEnv }
  const logged = options.log ? { log: options.log } : {}
  const say = options.log ?? ((name: string, line: string) => console.log(`[${name}] ${line}`))
  await checkClusterPorts(config)
  await mkdir(config.workspaceRoot, { recursive: true })
  const keys = await ensureIdentityKeys(join(config.dataDir, 'keys'))
  const store = await startSnapshotStore(join(config.dataDir, 'snapshots'), config.snapshotStorePort)
  const balancers: TcpBalancer[] = []
  const stop = async (): Promise<void> => {
    for (const handle of [...processes].reverse()) await handle.stop()
    for (const balancer of balancers) await balancer.close()
    await store.close()
  }
  const checks = healthChecks(config)
  const start = (spec: Omit<SupervisedProcess, 'log'>): ProcessHandle => {
    // Up once its health check passes: a process that crashes after that is restarted, never fatal.
    const ready = checks.get(spec.name)
    const handle = supervise({ ...spec, ...logged, ...(ready ? { ready } : {}) }, onFatal)
    processes.push(handle)
    return handle
  }
  const front = {
    ingress: await startTcpBalancer(config.nodes.map(node => node.ingressPort), config.front.ingressPort),
    admin: await startTcpBalancer(config.nodes.map(node => node.adminPort), config.front.adminPort),
    services: await startTcpBalancer(config.servicesPorts, config.front.servicesPort),
    gateway: await startTcpBalancer(config.gatewayPorts, config.front.gatewayPort),
  }
  balancers.push(front.ingress, front.admin, front.services, front.gateway)
  const { adminUrl, ingressUrl } = restateUrls(config.front)
  const waitHealthy = async (name: string, timeoutMs: number): Promise<void> => {
    const check = checks.get(name)
    if (!check) throw new Error(`no process named ${name}`)
    await waitUntil(check, timeoutMs, name)
  }
  config.nodes.forEach((node, index) => start({
    name: `restate-${index + 1}`,
    command: restateServerBinary(config.rootDir),
    args: ['--config-file', join(config.rootDir, 'restate-cluster.toml'), '--no-logo'],
    env: nodeEnv(config, node, index, base, store, keys.privateKeyPath),
  }))
  for (const node of config.nodes) await waitForRestate(restateUrls(node), 120_000)
  const servicesEnv = servicesEnvironment({ ...base, ...(isMultiTenant(config.gatewayApiKeys) ? { ZIDANE_SANDBOX: 'required' } : {}) })
  const shell = shellPolicy(servicesEnv).status
  say('cluster', `shell: ${shell.mode} (${shell.reason})`)
  const rootId = await workspaceRootId(config.dataDir)
  for (const [index, port] of config.servicesPorts.entries()) {
    start({
      name: `services-${index + 1}`,
      ...tsx(config.rootDir, 'services/replica-endpoint.ts'),
      stopTimeoutMs: shutdownGraceMs(base) + 5_000,
      env: {
        ...servicesEnv,
        SERVICES_HOST: '127.0.0.1',
        SERVICES_PORT: String(port),
        ZIDANE_LIVE_PORT: String(config.livePorts[index] ?? port + 100),
        ZIDANE_LIVE_TOKEN: config.liveToken,
        RESTATE_IDENTITY_KEYS: keys.publicKeyId,
        RESTATE_INGRESS_URL: ingressUrl,
        ZIDANE_WORKSPACE_ROOT: config.workspaceRoot,
        ZIDANE_WORKSPACE_ROOT_ID: rootId,
        ZIDANE_WORKSPACE_ROOT_INIT: index === 0 ? '1' : '0',
        ZIDANE_SANDBOX_CGROUP: replicaSandboxCgroup(base.ZIDANE_SANDBOX_CGROUP, index),
        // Each replica records (and at its start stops) only its own shell commands.
        ZIDANE_COMMANDS_DIR: join(config.dataDir, 'replicas', `services-${index + 1}`, 'running-commands'),
      },
    })
    await waitHealthy(`services-${index + 1}`, 120_000)
  }
  await waitUntil(async () => { await registerDeployment(adminUrl, `http://127.0.0.1:${config.front.servicesPort}`); return true }, 120_000, 'the services deployment to register')
  for (const [index, port] of config.gatewayPorts.entries()) {
    start({
      name: `gateway-${index + 1}`,
      ...tsx(config.rootDir, 'ingress-gateway/server.ts'),
      env: {
        ...withoutVariables(base, ['ANTHROPIC_']),
        // The gateway checks prompts' models against the services' providers; it is told Anthropic is on, never its key.
        ...(servicesEnv.ANTHROPIC_API_KEY ? { ZIDANE_ANTHROPIC: 'on' } : {}),
        ZIDANE_SHELL_STATUS: JSON.stringify(shell),
        GATEWAY_PORT: String(port),
        GATEWAY_HOST: config.host,
        GATEWAY_PUBLIC_URL: base.GATEWAY_PUBLIC_URL ?? `http://${config.host}:${config.front.gatewayPort}`,
        RESTATE_INGRESS_URL: ingressUrl,
        RESTATE_ADMIN_URL: adminUrl,
        GATEWAY_ANSWER_SECRET: config.answerSecret,
        ZIDANE_LIVE_TOKEN: config.liveToken,
        ...(config.gatewayApiKeys ? { GATEWAY_API_KEYS: config.gatewayApiKeys } : {}),
      },
    })
  }
  for (const index of config.gatewayPorts.keys()) await waitHealthy(`gateway-${index + 1}`, 120_000)
  return {
    gatewayUrl: `http://${config.host}:${config.front.gatewayPort}`,
    ingressUrl,
    adminUrl,
    processes,
    nodeAdminUrls: config.nodes.map(node => restateUrls(node).adminUrl),
    snapshotStore: store,
    balancers: front,
    nodeFabricUrls: config.nodes.map(node => `http://127.0.0.1:${node.fabricPort}`),
    shell,
    process: (name: string) => {
      const handle = processes.find(each => each.name === name)
      if (!handle) throw new Error(`no process named ${name}`)
      return handle
    },
    waitHealthy,
    stop,
  }
}
