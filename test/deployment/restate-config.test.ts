import { execFile } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { restateServerBinary } from '../../scripts/stack/restate-binary'
import { shellPolicy } from '../../services/shell-policy'

const run = promisify(execFile)
/** Without the docker compose plugin the compose check is reported as skipped, not as passed. */
const dockerCompose = await run('docker', ['compose', 'version']).then(() => true, () => false)

async function dumpConfig(): Promise<string> {
  const { stdout } = await run(restateServerBinary(), ['--config-file', 'restate.toml', '--dump-config'], { env: { ...process.env, RESTATE_BASE_DIR: await mkdtemp(join(tmpdir(), 'zidane-dump-')) } })
  return stdout
}

describe('restate.toml', () => {
  it('loads into the npm restate-server with every setting we rely on in force', async () => {
    const dumped = await dumpConfig()
    const retry = /\[default-retry-policy\]([\s\S]*?)\n\[/.exec(dumped)?.[1] ?? ''
    expect(retry).toContain('initial-interval = "100ms"')
    expect(retry).toContain('max-interval = "2s"')
    expect(retry).toContain('max-attempts = "unlimited"')
    expect(dumped).toContain('cluster-name = "zidane"')
    expect(dumped).toContain('default-num-partitions = 4')
    expect(dumped).toContain('default-journal-retention = "1d"')
    expect(dumped).toMatch(/inactivity-timeout = "1m"/)
    expect(dumped).toMatch(/abort-timeout = "10m"/)
  })
})

/** Resolves `${NAME}`, `${NAME-default}` and `${NAME:-default}` in a compose value the way `docker compose` does. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?:(:?)-([^}]*))?\}/g, (_match, name: string, colon: string | undefined, fallback: string | undefined) => {
    const set = env[name]
    if (fallback === undefined) return set ?? ''
    return set === undefined || (colon === ':' && set === '') ? fallback : set
  })
}

/** The services container's tool settings as `docker compose` would pass them, given the operator's `env`. */
async function servicesToolEnvironment(env: Record<string, string>): Promise<Record<string, string>> {
  const compose = parse(await readFile('docker-compose.yml', 'utf8')) as { services: { services: { environment: Record<string, string> } } }
  const names = ['ZIDANE_SANDBOX', 'ZIDANE_TOOLS', 'ZIDANE_DISABLE_TOOLS']
  return Object.fromEntries(names.map(name => [name, interpolate(compose.services.services.environment[name] ?? '', env)]))
}

describe('docker-compose.yml', () => {
  it('leaves shell out by default: the operator opts in with an empty ZIDANE_DISABLE_TOOLS', async () => {
    expect(shellPolicy(await servicesToolEnvironment({})).status).toEqual({ mode: 'disabled', reason: 'left out by ZIDANE_TOOLS / ZIDANE_DISABLE_TOOLS' })
    const optedIn = shellPolicy(await servicesToolEnvironment({ ZIDANE_DISABLE_TOOLS: '' })).status
    expect(optedIn.reason).not.toContain('left out')
    expect(shellPolicy(await servicesToolEnvironment({ ZIDANE_DISABLE_TOOLS: 'spawn' })).status.reason).not.toContain('left out')
  })

  it('pins the Restate image to the server version we ship and wires health-gated registration', async () => {
    const compose = parse(await readFile('docker-compose.yml', 'utf8')) as { services: Record<string, { image?: string; command?: string[]; restart?: string; depends_on?: Record<string, { condition: string }>; volumes?: string[] }> }
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { devDependencies: Record<string, string> }
    const serverVersion = (pkg.devDependencies['@restatedev/restate-server'] ?? '').replace(/^[\^~]/, '')
    const restate = compose.services.restate
    expect(restate?.image).toBe(`docker.restate.dev/restatedev/restate:${serverVersion}`)
    expect(restate?.command).toContain('--node-name')
    expect(restate?.volumes).toContain('restate-data:/restate-data')
    for (const name of ['restate', 'services', 'gateway']) expect(compose.services[name]?.restart).toBe('unless-stopped')
    expect(compose.services.register?.depends_on).toEqual({ restate: { condition: 'service_healthy' }, services: { condition: 'service_healthy' } })
  })

  it('publishes only the gateway: Restate ingress and admin, and the services, stay on the compose network', async () => {
    const compose = parse(await readFile('docker-compose.yml', 'utf8')) as { services: Record<string, { ports?: string[]; environment?: Record<string, string> }> }
    const published = Object.entries(compose.services).filter(([, service]) => (service.ports ?? []).length > 0).map(([name]) => name)
    expect(published).toEqual(['gateway'])
    expect(compose.services.services?.environment?.ZIDANE_SANDBOX).toBe('${ZIDANE_SANDBOX:-required}')
  })

  it.skipIf(!dockerCompose)('passes `docker compose config` where the docker compose plugin exists', async () => {
    await run('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], { env: { ...process.env, RESTATE_IDENTITY_KEYS: 'publickeyv1_x', GATEWAY_API_KEYS: 'k' } })
  })
})
