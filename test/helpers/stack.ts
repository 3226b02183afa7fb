import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { afterEach } from 'vitest'
import { basename, dirname, join } from 'node:path'
import { freeStackPortsEnv } from '../../scripts/stack/free-port'
import { loadStackConfig } from '../../scripts/stack/stack-config'
import { startStack } from '../../scripts/stack/start-stack'
import type { RunningStack } from '../../scripts/stack/start-stack'
import type { ProcessHandle } from '../../scripts/stack/supervisor'

/** A whole stack (Restate server, services, gateway as separate processes) on free ports, for end-to-end tests. */
export interface TestStack extends RunningStack {
  apiKeys: [string, string]
  dataDir: string
  /**
   * A folder the services' unprivileged user may write too (the stack runs them as `nobody` when it runs as root): where
   * unsandboxed test commands keep their ledgers of side effects, outside any workspace.
   */
  sharedDir: string
  /** The Restate server's Prometheus metrics (its node port). */
  metricsUrl: string
  /** The services endpoint's own address (the deployment Restate calls). */
  servicesUrl: string
  /** The last 2,000 lines the stack's processes printed (kept instead of printed, shown when a test fails). */
  output(): string
  /** Why the stack stopped, if a critical process (the Restate server) died. */
  fatalReasons(): string[]
  /** fetch against the gateway with the first (or the given) API key. */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>
  services(): RunningStack['processes'][number]
  destroy(): Promise<void>
}

/** Options of `startTestStack`. */
export interface TestStackOptions {
  /**
   * `1` serves only the first key (then `shell` may run unsandboxed, as `ZIDANE_SANDBOX` says); default 2: two
   * tenants, and `shell` runs only in the sandbox.
   */
  tenants?: 1 | 2
  /** More API keys the gateway serves after the two (each a tenant), for tests of many tenants at once. */
  extraApiKeys?: readonly string[]
}

/** End-to-end tests poll the gateway fast with one key: the per-key rate limit is tested in the gateway's own tests. */
const GENEROUS_GATEWAY_LIMITS = { GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_RATE_BURST: '10000' }

/**
 * Restate retries fast here (50 ms doubling to 500 ms, not restate.toml's 100 ms to 2 s), so tests wait less after a
 * kill; the agent runs' bound on attempts (`ZIDANE_MAX_ATTEMPTS`) is scaled with it, to the same minute of retries.
 */
const FAST_RETRIES = { RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '50ms', RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '500ms', ZIDANE_MAX_ATTEMPTS: '120' }

/**
 * Starts a stack with two tenants' API keys (or one, see options); `env` reaches the services and the gateway. A start
 * that fails (a process giving up at start, e.g. a free port another process took between picking and binding it) is
 * tried once more on new ports; a second failure reports what the processes printed.
 */
export async function startTestStack(env: Record<string, string> = {}, options: TestStackOptions = {}): Promise<TestStack> {
  try {
    return await startTestStackOnce(env, options)
  } catch (error) {
    console.error(`[test stack] start failed, trying once more on new ports: ${error instanceof Error ? error.message : String(error)}`)
    return startTestStackOnce(env, options)
  }
}

async function startTestStackOnce(env: Record<string, string>, options: TestStackOptions): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-e2e-'))
  const apiKeys: [string, string] = ['tenant-a-key-0123456789', 'tenant-b-key-0123456789']
  const served = options.tenants === 1 ? apiKeys[0] : [...apiKeys, ...(options.extraApiKeys ?? [])].join(',')
  const loaded = await loadStackConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: served, ...(await freeStackPortsEnv()) })
  // A kill plan is the crash tests' probe, which only their own services entry carries.
  const config = env.ZIDANE_TEST_KILL_PLAN === undefined ? loaded : { ...loaded, servicesEntry: 'test/helpers/services-with-probe.ts' }
  const fatal: string[] = []
  const output: string[] = []
  const keep = (name: string, line: string): void => { output.push(`[${name}] ${line}`); if (output.length > 2_000) output.shift() }
  const processes: ProcessHandle[] = []
  let giveUp: (reason: string) => void = () => undefined
  const fatalAtStart = new Promise<never>((_resolve, reject) => { giveUp = reason => reject(new Error(reason)) })
  fatalAtStart.catch(() => undefined) // a fatal exit after the start is reported through fatalReasons()
  const onFatal = (reason: string): void => { fatal.push(reason); giveUp(reason) }
  // Run as root, the stack starts the services as an unprivileged user: the kill plan's folder must be theirs to write.
  if (env.ZIDANE_TEST_KILL_PLAN !== undefined) await shareWithServices(dirname(env.ZIDANE_TEST_KILL_PLAN))
  const sharedDir = join(dataDir, 'shared')
  await mkdir(sharedDir)
  await shareWithServices(sharedDir)
  const starting = startStack(config, onFatal, { ZIDANE_WORKSPACE_ROOT: join(dataDir, 'workspaces'), ZIDANE_SANDBOX_CGROUP: sandboxCgroupOf(dataDir), ...FAST_RETRIES, ...GENEROUS_GATEWAY_LIMITS, ...env }, keep, processes)
  const stack = await Promise.race([starting, fatalAtStart]).catch(async (error: unknown) => {
    const stopAll = async (): Promise<void> => { for (const handle of [...processes].reverse()) await handle.stop() }
    // The start may still add a process after giving up here: stop those too once it settles.
    void starting.then(stopAll, stopAll)
    await stopAll()
    await rm(dataDir, { recursive: true, force: true })
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output.slice(-40).join('\n')}`, { cause: error })
  })
  return {
    ...stack,
    fatalReasons: () => [...fatal],
    output: () => `${output.join('\n')}${fatal.length > 0 ? `\nfatal: ${fatal.join('; ')}` : ''}`,
    apiKeys,
    dataDir,
    sharedDir,
    metricsUrl: `http://127.0.0.1:${config.fabricPort}/metrics`,
    servicesUrl: `http://127.0.0.1:${config.servicesPort}`,
    services: () => {
      const handle = stack.processes.find(process => process.name === 'services')
      if (!handle) throw new Error('no services process')
      return handle
    },
    request: (path, init = {}) => {
      const { key, headers, ...rest } = init
      const auth: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key ?? apiKeys[0]}` }
      return fetch(`${stack.gatewayUrl}${path}`, { ...rest, headers: { ...auth, ...(rest.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(headers as Record<string, string> | undefined) } })
    },
    destroy: async () => {
      await stack.stop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** Prints the stack's process output after every failed test of the file. */
export function printStackOutputOnFailure(stack: () => TestStack | undefined): void {
  afterEach(context => {
    if (context.task.result?.state === 'fail') console.error(`---- stack output (${context.task.name}) ----\n${stack()?.output() ?? ''}`)
  })
}

/** Lets the services' unprivileged user create files in `folder`, a test's own (the stack runs them as `nobody` when root). */
export async function shareWithServices(folder: string): Promise<void> {
  await chmod(folder, 0o777)
}

/** A cgroup of its own for the stack's tenants: two test runs side by side use the same API keys, so the same tenants. */
function sandboxCgroupOf(dataDir: string): string {
  return `zidane-sandbox-${basename(dataDir).replace(/[^A-Za-z0-9_-]/g, '')}`
}
