import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

interface ComposeService { command?: string[]; entrypoint?: string[]; environment?: Record<string, string>; volumes?: string[]; profiles?: string[] }

async function composeServices(file: string): Promise<Record<string, ComposeService>> {
  return (parse(await readFile(file, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }).services
}

async function serverVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { devDependencies: Record<string, string> }
  return (pkg.devDependencies['@restatedev/restate-server'] ?? '').replace(/^[\^~]/, '')
}

/** The release slots docs/operations.md ("Roll a release") drives, in both compose files. */
describe.each(['docker-compose.yml', 'docker-compose.cluster.yml'])('%s release slots', file => {
  it('runs two services slots that differ only in their code folder and profile, each at its own address', async () => {
    const services = await composeServices(file)
    const { volumes: blueVolumes, ...blue } = services.services ?? {}
    const { volumes: greenVolumes, profiles, ...green } = services['services-green'] ?? {}
    expect(green).toEqual(blue)
    expect(profiles).toEqual(['green'])
    expect(blueVolumes).toEqual(['${ZIDANE_BLUE_DIR:-.}:/app', 'workspaces:/workspaces'])
    expect(greenVolumes).toEqual(['${ZIDANE_GREEN_DIR:-./green}:/app', 'workspaces:/workspaces'])
    // Each slot's shell commands are its own: a starting slot must not stop the other's.
    expect(blue.environment?.ZIDANE_COMMANDS_DIR?.startsWith('/workspaces')).toBe(false)
    expect(services.gateway?.volumes).toEqual(['${ZIDANE_GATEWAY_DIR:-.}:/app'])
  })

  it('registers only at the first start and never with force; Restate\'s CLI matches the server', async () => {
    const services = await composeServices(file)
    const register = services.register?.command?.join(' ') ?? ''
    expect(register).toContain('"force":false')
    expect(register).not.toContain('"force":true')
    expect(register).toMatch(/^sh -c if curl .*\/deployments \| grep -q '"id"'; then /)
    expect(services['restate-cli']?.entrypoint).toEqual(['npx', '--yes', `@restatedev/restate@${await serverVersion()}`])
    expect(services['restate-cli']?.profiles).toEqual(['tools'])
  })
})
