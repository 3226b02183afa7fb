import { join, resolve } from 'node:path'
import { loadStackConfig } from '../stack/stack-config'
import { freePorts } from '../stack/free-port'

/** The ports of one Restate node of the loopback cluster. */
export interface NodePorts {
  ingressPort: number
  adminPort: number
  fabricPort: number
}

/**
 * Everything `npm run start:cluster` runs: three Restate nodes, two services replicas, two gateways, and in front of
 * each group a loopback TCP balancer on the port a single-node stack would use, plus the local snapshot store.
 */
export interface ClusterConfig {
  rootDir: string
  /** Cluster data: `nodes/<name>` per Restate node, `snapshots/`, `workspaces/`, keys, the generated API key. */
  dataDir: string
  /** The shared workspace root of the services replicas (`ZIDANE_WORKSPACE_ROOT`). */
  workspaceRoot: string
  nodes: NodePorts[]
  servicesPorts: number[]
  /** The live hub port of each services replica (model deltas for the gateways' event streams). */
  livePorts: number[]
  gatewayPorts: number[]
  /** Balancer ports: what clients, the gateways and Restate use. */
  front: { gatewayPort: number; ingressPort: number; adminPort: number; servicesPort: number }
  snapshotStorePort: number
  host: string
  gatewayApiKeys: string
  generatedKey: boolean
  answerSecret: string
  /** Shared token of the services' live hubs and the gateways. */
  liveToken: string
}

function port(value: string | undefined, fallback: number): number {
  const parsed = Number(value)
  return Number.isInteger(parsed) && parsed > 0 && parsed < 65536 ? parsed : fallback
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index + 1)
}

/**
 * Reads the cluster configuration from the environment: the front ports are those of `npm start` (`GATEWAY_PORT`
 * 3000, `RESTATE_INGRESS_PORT` 8080, `RESTATE_ADMIN_PORT` 9070, `SERVICES_PORT` 9080); node `i` (1–3) listens on
 * ingress/admin/fabric `+i` (fabric from `RESTATE_FABRIC_PORT`, 5122), replica `j` (1–2) of the services and the
 * gateway on `+j`. Data under `ZIDANE_DATA_DIR` (default `.restate-data/cluster`).
 */
export async function loadClusterConfig(env: NodeJS.ProcessEnv = process.env): Promise<ClusterConfig> {
  const rootDir = resolve(env.ZIDANE_ROOT ?? process.cwd())
  const dataDir = resolve(env.ZIDANE_DATA_DIR ?? join(rootDir, '.restate-data', 'cluster'))
  const stack = await loadStackConfig({ ...env, ZIDANE_DATA_DIR: dataDir })
  const fabricPort = port(env.RESTATE_FABRIC_PORT, 5122)
  return {
    rootDir,
    dataDir,
    workspaceRoot: resolve(env.ZIDANE_WORKSPACE_ROOT ?? join(dataDir, 'workspaces')),
    nodes: range(3).map(index => ({ ingressPort: stack.ingressPort + index, adminPort: stack.adminPort + index, fabricPort: fabricPort + index })),
    servicesPorts: range(2).map(index => stack.servicesPort + index),
    livePorts: range(2).map(index => stack.livePort + index),
    gatewayPorts: range(2).map(index => stack.gatewayPort + index),
    front: { gatewayPort: stack.gatewayPort, ingressPort: stack.ingressPort, adminPort: stack.adminPort, servicesPort: stack.servicesPort },
    snapshotStorePort: port(env.ZIDANE_SNAPSHOT_STORE_PORT, 9060),
    host: stack.host,
    gatewayApiKeys: stack.gatewayApiKeys,
    generatedKey: stack.generatedKey,
    answerSecret: stack.answerSecret,
    liveToken: stack.liveToken,
  }
}

/** Free loopback ports for every process of a cluster (tests, chaos, bench): no two runs collide. */
export async function withFreePorts(config: ClusterConfig): Promise<ClusterConfig> {
  const ports = await freePorts(config.nodes.length * 3 + config.servicesPorts.length + config.livePorts.length + config.gatewayPorts.length + 5)
  const take = (): number => ports.shift() ?? 0
  return {
    ...config,
    nodes: config.nodes.map(() => ({ ingressPort: take(), adminPort: take(), fabricPort: take() })),
    servicesPorts: config.servicesPorts.map(take),
    livePorts: config.livePorts.map(take),
    gatewayPorts: config.gatewayPorts.map(take),
    front: { gatewayPort: take(), ingressPort: take(), adminPort: take(), servicesPort: take() },
    snapshotStorePort: take(),
  }
}

/** Every port the cluster binds, with the variable that moves it (for the taken-port check). */
export function clusterPorts(config: ClusterConfig): [number, string][] {
  return [
    [config.front.gatewayPort, 'GATEWAY_PORT'],
    [config.front.ingressPort, 'RESTATE_INGRESS_PORT'],
    [config.front.adminPort, 'RESTATE_ADMIN_PORT'],
    [config.front.servicesPort, 'SERVICES_PORT'],
    ...config.nodes.flatMap((node): [number, string][] => [[node.ingressPort, 'RESTATE_INGRESS_PORT'], [node.adminPort, 'RESTATE_ADMIN_PORT'], [node.fabricPort, 'RESTATE_FABRIC_PORT']]),
    ...config.servicesPorts.map((value): [number, string] => [value, 'SERVICES_PORT']),
    ...config.livePorts.map((value): [number, string] => [value, 'ZIDANE_LIVE_PORT']),
    ...config.gatewayPorts.map((value): [number, string] => [value, 'GATEWAY_PORT']),
    [config.snapshotStorePort, 'ZIDANE_SNAPSHOT_STORE_PORT'],
  ]
}
