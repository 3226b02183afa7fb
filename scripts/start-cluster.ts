import { loadClusterConfig } from './cluster/cluster-config'
import { startCluster } from './cluster/start-cluster'
import type { RunningCluster } from './cluster/start-cluster'
import { apiKeyBanner } from './stack/start-banner'
import type { ProcessHandle } from './stack/supervisor'

/** `npm run start:cluster`: a 3-node Restate cluster, two services replicas and two gateways on this machine, supervised, until Ctrl-C. */
async function main(): Promise<void> {
  const config = await loadClusterConfig()
  const processes: ProcessHandle[] = []
  let cluster: RunningCluster | undefined = undefined
  let stopping = false
  const shutdown = async (code: number): Promise<void> => {
    if (stopping) return
    stopping = true
    console.log('[cluster] stopping…')
    if (cluster) await cluster.stop()
    else for (const handle of [...processes].reverse()) await handle.stop()
    console.log('[cluster] stopped')
    process.exit(code)
  }
  process.on('exit', () => { for (const handle of processes) handle.current()?.kill('SIGKILL') })
  process.on('SIGINT', () => { void shutdown(0) })
  process.on('SIGTERM', () => { void shutdown(0) })
  const onFatal = (reason: string): void => {
    console.error(`[cluster] ${reason}. The cluster stops now; fix the cause and run npm run start:cluster again (sessions are kept in ${config.dataDir}).`)
    void shutdown(1)
  }
  cluster = await startCluster(config, onFatal, { processes }).catch((error: unknown) => {
    console.error(`[cluster] ${error instanceof Error ? error.message : String(error)}. The cluster stops now.`)
    return shutdown(1).then(() => undefined)
  })
  if (!cluster) return
  const { line, auth } = apiKeyBanner(config.gatewayApiKeys, config.generatedKey ? `${config.dataDir}/gateway-api-key` : undefined)
  console.log([
    '',
    `zidane cluster is up. Gateway: ${cluster.gatewayUrl} (balanced over ${config.gatewayPorts.map(port => `:${port}`).join(', ')})`,
    `Restate nodes: ${config.nodes.map((node, index) => `node-${index + 1} ingress :${node.ingressPort} admin :${node.adminPort}`).join('; ')}`,
    `Services replicas: ${config.servicesPorts.map(port => `:${port}`).join(', ')} behind :${config.front.servicesPort}; workspaces in ${config.workspaceRoot}`,
    line,
    '',
    'Try:',
    `  curl -s -X POST "${cluster.gatewayUrl}/v1/sessions/demo/prompts?wait=true"${auth} -H "content-type: application/json" -d '{"prompt":"write: hello.txt Hello\\nread: hello.txt"}'`,
    '',
  ].join('\n'))
}

await main()
