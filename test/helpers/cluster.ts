import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadClusterConfig, withFreePorts } from '../../scripts/cluster/cluster-config'
import type { ClusterConfig } from '../../scripts/cluster/cluster-config'
import { startCluster } from '../../scripts/cluster/start-cluster'
import type { RunningCluster } from '../../scripts/cluster/start-cluster'
import type { ProcessHandle } from '../../scripts/stack/supervisor'

/** A loopback cluster on free ports and a temporary data folder, for tests. */
export interface TestCluster extends RunningCluster {
  config: ClusterConfig
  apiKey: string
  /** The last 3,000 lines its processes printed. */
  output(): string[]
  /** fetch against the gateways' balancer with the API key. */
  request(path: string, init?: { method?: string; body?: unknown }): Promise<Response>
  /** SIGKILLs the process `name` and keeps it down (no restart). */
  killForGood(name: string): Promise<void>
  destroy(): Promise<void>
}

/** Starts a cluster with one API key; `env` reaches every process. A start that fails is tried once more on new ports. */
export async function startTestCluster(env: NodeJS.ProcessEnv = {}): Promise<TestCluster> {
  try {
    return await startTestClusterOnce(env)
  } catch (error) {
    console.error(`[test cluster] start failed, trying once more on new ports: ${error instanceof Error ? error.message : String(error)}`)
    return startTestClusterOnce(env)
  }
}

async function startTestClusterOnce(env: NodeJS.ProcessEnv): Promise<TestCluster> {
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-cluster-'))
  const apiKey = 'cluster-key-0123456789abcdef'
  const config = await withFreePorts(await loadClusterConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: apiKey }))
  const lines: string[] = []
  const log = (name: string, line: string): void => { lines.push(`[${name}] ${line}`); if (lines.length > 3_000) lines.shift() }
  const processes: ProcessHandle[] = []
  const limits = { GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_RATE_BURST: '10000', LOG_LEVEL: 'warn' }
  const cluster = await startCluster(config, reason => log('fatal', reason), { extraEnv: { ...limits, ...env }, log, processes }).catch(async (error: unknown) => {
    for (const handle of [...processes].reverse()) await handle.stop()
    await rm(dataDir, { recursive: true, force: true })
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${lines.slice(-40).join('\n')}`, { cause: error })
  })
  return {
    ...cluster,
    config,
    apiKey,
    output: () => [...lines],
    request: (path, init = {}) => fetch(`${cluster.gatewayUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${apiKey}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    }),
    killForGood: async name => {
      const handle = cluster.process(name)
      const child = handle.current()
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
        child.kill('SIGKILL')
        await exited
      }
      await handle.stop() // cancels the supervisor's restart
    },
    destroy: async () => {
      await cluster.stop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
