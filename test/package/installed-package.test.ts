import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stopProcess } from '../../scripts/stack/supervisor'
import { freePort, startRestateHarness, waitFor } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { consumerProject } from './consumer-lockfile'

// Builds and packs zidane, installs the tarball offline into a project outside the repository, and runs three
// consumer programs under plain node (no TypeScript loader): the README's library example, a Restate service of the
// user's own, and the CLI through the package's bin.

const repositoryRoot = join(import.meta.dirname, '..', '..')
const nodeFolder = dirname(process.execPath)
const plainEnv = { ...process.env, PATH: `${nodeFolder}:${process.env.PATH ?? ''}`, NODE_OPTIONS: '', ANTHROPIC_API_KEY: '' }

interface Finished { code: number | null; stdout: string; stderr: string }

/** Runs a command to its end and collects its output. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = plainEnv): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.once('error', reject)
    child.once('close', code => resolve({ code, stdout, stderr }))
  })
}

/** Runs a command and fails with its output when it does not exit 0. */
async function runOk(command: string, args: string[], cwd: string): Promise<Finished> {
  const finished = await run(command, args, cwd)
  if (finished.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${finished.code}\n${finished.stdout}\n${finished.stderr}`)
  return finished
}

describe('the packed package, installed outside the repository', { timeout: 240_000 }, () => {
  let project = ''

  beforeAll(async () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22)
    project = mkdtempSync(join(tmpdir(), 'zidane-consumer-'))
    await runOk('npm', ['pack', '--pack-destination', project], repositoryRoot)
    const tarball = readdirSync(project).find(name => name.endsWith('.tgz'))
    if (tarball === undefined) throw new Error('npm pack made no tarball')
    const { manifest, lock } = consumerProject(repositoryRoot, tarball)
    writeFileSync(join(project, 'package.json'), manifest)
    writeFileSync(join(project, 'package-lock.json'), lock)
    await runOk('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], project)
    for (const program of ['library-example.mjs', 'restate-service.mjs', 'typed-service.ts']) copyFileSync(join(import.meta.dirname, 'consumer', program), join(project, program))
  }, 240_000)

  afterAll(() => {
    if (project !== '') rmSync(project, { recursive: true, force: true })
  })

  it('ships the build only: ESM JavaScript, declarations and source maps for every entry point', async () => {
    const listing = (await runOk('tar', ['-tzf', readdirSync(project).find(name => name.endsWith('.tgz')) ?? ''], project)).stdout
    for (const entry of ['index', 'durable/index', 'durable/sqlite/index', 'restate/index', 'session/index', 'providers/index', 'providers/anthropic/index', 'tools/index', 'testing/index']) {
      for (const suffix of ['.js', '.js.map', '.d.ts', '.d.ts.map']) expect(listing).toContain(`package/dist/${entry}${suffix}`)
    }
    expect(listing).not.toMatch(/package\/(src|test|services|ingress-gateway)\//)
  })

  it('gives TypeScript users the declarations of every entry point (moduleResolution: nodenext)', async () => {
    const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2023', strict: true, noEmit: true, skipLibCheck: true, types: [] }
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['typed-service.ts'] }))
    await runOk(process.execPath, [join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], project)
    writeFileSync(join(project, 'wrong.ts'), "import { createAgent } from 'zidane'\nexport const wrong: number = createAgent\n")
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['wrong.ts'] }))
    expect((await run(process.execPath, [join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], project)).stdout).toContain('TS2322')
  })

  it('runs the README library example under plain node', async () => {
    const finished = await runOk(process.execPath, ['library-example.mjs'], project)
    expect(finished.stdout.trim()).toMatch(/^completed \d+ 0$/)
  })

  it('runs the CLI through the package bin, without the experimental-SQLite warning', async () => {
    const finished = await runOk(join(project, 'node_modules', '.bin', 'zidane'), ['run', '--session-db', './sessions.db', '--session', 's1', '--prompt', 'hello'], project)
    expect(finished.stdout).toContain('Echo: hello')
    expect(finished.stderr).not.toMatch(/ExperimentalWarning|SQLite is an experimental/)
  })

  describe('a Restate service of the user, written with zidane/restate', () => {
    let harness: RestateHarness | undefined
    let service: ChildProcess | undefined
    let deployment: ChildProcess | undefined

    afterAll(async () => {
      if (service !== undefined) await stopProcess(service)
      if (deployment !== undefined) await stopProcess(deployment)
      await harness?.stop()
    })

    it('serves an agent run called through Restate ingress', async () => {
      harness = await startRestateHarness()
      const port = await freePort()
      let output = ''
      service = spawn(process.execPath, ['restate-service.mjs'], { cwd: project, env: { ...plainEnv, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
      service.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
      service.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
      await waitFor(() => output.includes('consumer service listening'), 60_000, `the consumer service to listen (${output})`)
      await harness.registerDeployment(`http://127.0.0.1:${port}`)
      const response = await harness.call<{ status: string; text: string }>('Triage/alerts-1/run', { prompt: 'hello' })
      expect(response.status, output).toBe(200)
      expect(response.body).toMatchObject({ status: 'completed', text: 'Echo: hello' })
    })

    it('builds the deployment (npm run build:deploy): its services run as plain JavaScript and register with Restate', async () => {
      if (harness === undefined) throw new Error('the previous test starts the Restate server')
      await runOk('npm', ['run', 'build:deploy'], repositoryRoot)
      // The gateway built there serves the console from its own folder.
      expect(existsSync(join(repositoryRoot, 'build', 'ingress-gateway', 'console', 'index.html'))).toBe(true)
      const port = await freePort()
      let output = ''
      const env = { ...plainEnv, SERVICES_PORT: String(port), SERVICES_HOST: '127.0.0.1', ZIDANE_WORKSPACE_ROOT: join(project, 'workspaces'), RESTATE_IDENTITY_KEYS: '' }
      deployment = spawn(process.execPath, [join(repositoryRoot, 'build', 'services', 'endpoint.js')], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
      deployment.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
      deployment.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
      await waitFor(() => output.includes('zidane services listening'), 60_000, `the built services to listen (${output})`)
      await harness.registerDeployment(`http://127.0.0.1:${port}`)
      const response = await harness.call<{ status: string; text: string }>('session/local~built/run', { prompt: 'hello' })
      expect(response.status, output).toBe(200)
      expect(response.body).toMatchObject({ status: 'completed', text: 'Echo: hello' })
    })
  })
})
