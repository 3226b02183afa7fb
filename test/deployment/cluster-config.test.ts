import { execFile } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { restateServerBinary } from '../../scripts/stack/restate-binary'
import { WORKSPACE_ROOT_MARKER } from '../../services/workspace-root'

const run = promisify(execFile)
const dockerCompose = await run('docker', ['compose', 'version']).then(() => true, () => false)

async function dump(file: string): Promise<string> {
  const { stdout } = await run(restateServerBinary(), ['--config-file', file, '--dump-config'], { env: { ...process.env, RESTATE_BASE_DIR: await mkdtemp(join(tmpdir(), 'zidane-dump-')) } })
  return stdout
}

function section(dumped: string, name: string): string {
  return new RegExp(`\\n\\[${name.replace(/\./g, '\\.')}\\]([\\s\\S]*?)\\n\\[`).exec(dumped)?.[1] ?? ''
}

interface ComposeService { image?: string; command?: string[]; entrypoint?: string[]; environment?: Record<string, string>; volumes?: string[]; ports?: string[]; deploy?: { replicas?: number }; depends_on?: Record<string, { condition: string }> | string[]; restart?: string }

async function compose(): Promise<Record<string, ComposeService>> {
  return (parse(await readFile('docker-compose.cluster.yml', 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }).services
}

describe('restate-cluster.toml', () => {
  it('loads into the npm restate-server: replicated metadata, log and partitions (factor 2), a snapshot repository, and the single node\'s invocation settings', async () => {
    const cluster = await dump('restate-cluster.toml')
    const single = await dump('restate.toml')
    expect(cluster).toMatch(/roles = \[\s*"http-ingress",\s*"admin",\s*"worker",\s*"log-server",\s*"metadata-server",?\s*\]/)
    expect(cluster).toContain('default-replication = 2')
    expect(section(cluster, 'bifrost')).toContain('default-provider = "replicated"')
    expect(section(cluster, 'metadata-client')).toContain('type = "replicated"')
    expect(section(cluster, 'worker.snapshots')).toContain('destination = "s3://snapshots/zidane-cluster"')
    expect(cluster).toContain('default-num-partitions = 4')
    for (const name of ['default-retry-policy', 'worker.invoker']) expect(section(cluster, name)).toBe(section(single, name))
    expect(cluster).toContain('default-journal-retention = "1d"')
  })
})

describe('docker-compose.cluster.yml', () => {
  it('runs three Restate nodes on the pinned image, each with its name, data volume and advertised address; only the first provisions', async () => {
    const services = await compose()
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { devDependencies: Record<string, string> }
    const serverVersion = (pkg.devDependencies['@restatedev/restate-server'] ?? '').replace(/^[\^~]/, '')
    const nodes = ['restate-1', 'restate-2', 'restate-3']
    for (const name of nodes) {
      const node = services[name]
      expect(node?.image).toBe(`docker.restate.dev/restatedev/restate:${serverVersion}`)
      expect(node?.command).toEqual(['--node-name', name, '--config-file', '/etc/restate/restate.toml'])
      expect(node?.volumes).toContain(`${name}-data:/restate-data`)
      expect(node?.volumes).toContain('./restate-cluster.toml:/etc/restate/restate.toml:ro')
      expect(node?.environment?.RESTATE_ADVERTISED_ADDRESS).toBe(`http://${name}:5122/`)
      expect(JSON.parse(node?.environment?.RESTATE_METADATA_CLIENT__ADDRESSES ?? '[]')).toEqual(nodes.map(each => `http://${each}:5122/`))
      expect(node?.restart).toBe('unless-stopped')
    }
    expect(nodes.map(name => services[name]?.environment?.RESTATE_AUTO_PROVISION)).toEqual(['true', 'false', 'false'])
  })

  it('runs two services replicas on one shared workspace volume, whose marker the init job writes with the id the replicas check', async () => {
    const services = await compose()
    const replicas = services.services
    expect(replicas?.deploy?.replicas).toBe(2)
    expect(replicas?.command).toEqual(['node', 'build/services/replica-endpoint.js'])
    expect(replicas?.volumes).toContain('workspaces:/workspaces')
    expect(replicas?.environment?.ZIDANE_WORKSPACE_ROOT).toBe('/workspaces')
    expect(replicas?.environment?.ZIDANE_COMMANDS_DIR?.startsWith('/workspaces')).toBe(false)
    const init = services['workspace-init']
    expect(init?.volumes).toContain('workspaces:/workspaces')
    expect(init?.command?.join(' ')).toContain(`/workspaces/${WORKSPACE_ROOT_MARKER}`)
    expect(init?.environment?.ZIDANE_WORKSPACE_ROOT_ID).toBe(replicas?.environment?.ZIDANE_WORKSPACE_ROOT_ID)
    expect(replicas?.depends_on).toEqual({ 'workspace-init': { condition: 'service_completed_successfully' } })
  })

  it('publishes only the balancer, which spreads the gateways (and, internally, Restate\'s ingress and admin) over every replica', async () => {
    const services = await compose()
    const published = Object.entries(services).filter(([, service]) => (service.ports ?? []).length > 0).map(([name]) => name)
    expect(published).toEqual(['balancer'])
    expect(services.gateway?.deploy?.replicas).toBe(2)
    expect(services.gateway?.environment?.RESTATE_INGRESS_URL).toBe('http://balancer:8080')
    expect(services.gateway?.environment?.GATEWAY_ANSWER_SECRET).toContain(':?')
    const nginx = await readFile('deploy/cluster/nginx.conf', 'utf8')
    for (const node of ['restate-1', 'restate-2', 'restate-3']) {
      expect(nginx).toContain(`server ${node}:8080`)
      expect(nginx).toContain(`server ${node}:9070`)
    }
    expect(nginx).toContain('server gateway:3000 resolve')
    expect(nginx).toContain('proxy_buffering off')
  })

  it.skipIf(!dockerCompose)('passes `docker compose config` where the docker compose plugin exists', async () => {
    await run('docker', ['compose', '-f', 'docker-compose.cluster.yml', 'config', '--quiet'], { env: { ...process.env, RESTATE_IDENTITY_KEYS: 'publickeyv1_x', GATEWAY_API_KEYS: 'k', GATEWAY_ANSWER_SECRET: 's', MINIO_ROOT_PASSWORD: 'p' } })
  })
})
