import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { shutdownGraceMs } from '../../services/drain/shutdown-config'
import { shellPolicy } from '../../services/shell-policy'
import type { ShellStatus } from '../../services/shell-policy'
import { acceptsConnections, checkStackPorts } from './check-ports'
import { ensureIdentityKeys } from './identity-keys'
import { restateServerBinary } from './restate-binary'
import { registerDeployment } from './register-deployment'
import { isMultiTenant, servicesEnvironment, withoutVariables } from './process-env'
import { restateListenEnv, restateUrls, waitForRestate } from './restate-server'
import type { StackConfig } from './stack-config'
import { asServicesUser, prepareForServicesUser, servicesUser } from './services-user'
import { supervise } from './supervisor'
import type { ProcessHandle } from './supervisor'
import { isHealthy, waitUntil } from './wait'

/** A running local stack: Restate server, services endpoint, gateway. */
export interface RunningStack {
  gatewayUrl: string
  ingressUrl: string
  adminUrl: string
  processes: ProcessHandle[]
  /** How the `shell` tool runs (sandboxed, unsandboxed or disabled), as printed at start-up and served by `/readyz`. */
  shell: ShellStatus
  stop(): Promise<void>
}

/** Runs a TypeScript entry in ONE Node process (tsx's loader, not its CLI wrapper), so signals reach the program itself. */
function tsx(rootDir: string, script: string): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', pathToFileURL(join(rootDir, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href, join(rootDir, script)] }
}

/**
 * How the services process starts: as the unprivileged `ZIDANE_SERVICES_USER` (default `nobody`) when the stack runs
 * as root and can hand it the cgroups the sandbox needs, with the workspace root and a home of its own; else as the
 * stack's own user.
 */
function servicesProgram(config: StackConfig, workspaceRoot: string, env: NodeJS.ProcessEnv, log: ((name: string, line: string) => void) | undefined): { program: { command: string; args: string[] }; env: NodeJS.ProcessEnv } {
  const program = tsx(config.rootDir, config.servicesEntry ?? 'services/endpoint.ts')
  const say = log ?? ((name: string, line: string) => console.log(`[${name}] ${line}`))
  const choice = servicesUser(env)
  if (choice.user === undefined) {
    if (choice.keepsRootBecause !== undefined) say('stack', `services run as root: ${choice.keepsRootBecause}; see docs/security.md`)
    return { program, env: {} }
  }
  const { user } = choice
  const home = join(config.dataDir, 'services-home')
  const cgroups = prepareForServicesUser(user, config.dataDir, [workspaceRoot, home])
  say('stack', `services run as ${user.name} (uid ${user.uid}), not root`)
  return { program: asServicesUser(user, cgroups, program.command, program.args), env: { HOME: home } }
}

/**
 * Starts the whole stack and resolves once the gateway answers; `onFatal` is called if the Restate server dies or a
 * process keeps exiting before it is up (it cannot start). A services or gateway process that crashes after it was
 * up is restarted however often it crashes: it never stops Restate or the other processes. Each process is pushed to
 * `processes` as soon as it starts, so a caller can stop them even while the stack is still starting. Throws
 * `PortInUseError` before starting anything when a port is taken.
 */
export async function startStack(config: StackConfig, onFatal: (reason: string) => void, extraEnv: NodeJS.ProcessEnv = {}, log?: (name: string, line: string) => void, processes: ProcessHandle[] = []): Promise<RunningStack> {
  const logged = log ? { log } : {}
  await checkStackPorts(config)
  const { adminUrl, ingressUrl } = restateUrls(config)
  const keys = await ensureIdentityKeys(join(config.dataDir, 'keys'))
  const stop = async (): Promise<void> => { for (const handle of [...processes].reverse()) await handle.stop() }
  processes.push(supervise({
    name: 'restate',
    command: restateServerBinary(config.rootDir),
    args: ['--config-file', join(config.rootDir, 'restate.toml'), '--no-logo'],
    critical: true,
    ...logged,
    env: {
      ...withoutVariables({ ...process.env, ...extraEnv }, ['GATEWAY_', 'ANTHROPIC_', 'ZIDANE_LIVE_']),
      // octocrab: the server's check for a newer release logs an ERROR line when offline; the check is harmless.
      RESTATE_LOG_FILTER: process.env.RESTATE_LOG_FILTER ?? 'warn,octocrab=off',
      RESTATE_BASE_DIR: config.dataDir,
      ...restateListenEnv(config),
      RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: keys.privateKeyPath,
    },
  }, onFatal))
  await waitForRestate({ adminUrl, ingressUrl }, 60_000)
  // With several tenants, one tenant's shell must not reach another's files: the sandbox or no shell.
  const servicesEnv = servicesEnvironment({ ...process.env, ...extraEnv, ...(isMultiTenant(config.gatewayApiKeys) ? { ZIDANE_SANDBOX: 'required' } : {}) })
  const shell = shellPolicy(servicesEnv).status
  ;(log ?? ((name: string, line: string) => console.log(`[${name}] ${line}`)))('stack', `shell: ${shell.mode} (${shell.reason})`)
  const workspaceRoot = process.env.ZIDANE_WORKSPACE_ROOT ?? join(config.dataDir, 'workspaces')
  const services = servicesProgram(config, workspaceRoot, { ...process.env, ...extraEnv }, log)
  processes.push(supervise({
    name: 'services',
    ...services.program,
    ...logged,
    // Up once it listens: a services process that crashes after that (a run's step crashing it) is restarted forever.
    ready: () => acceptsConnections(config.servicesPort),
    // A stopped services process first lets its running steps finish (its shutdown grace).
    stopTimeoutMs: shutdownGraceMs({ ...process.env, ...extraEnv }) + 5_000,
    env: { ...servicesEnv, SERVICES_HOST: '127.0.0.1', SERVICES_PORT: String(config.servicesPort), ZIDANE_LIVE_PORT: String(config.livePort), ZIDANE_LIVE_TOKEN: config.liveToken, RESTATE_IDENTITY_KEYS: keys.publicKeyId, RESTATE_INGRESS_URL: ingressUrl, ZIDANE_WORKSPACE_ROOT: workspaceRoot, ...services.env },
  }, onFatal))
  // Registering before the services listen would make Restate log discovery warnings.
  await waitUntil(() => acceptsConnections(config.servicesPort), 120_000, 'the services to listen')
  await waitUntil(async () => { await registerDeployment(adminUrl, `http://127.0.0.1:${config.servicesPort}`); return true }, 120_000, 'the services deployment to register')
  processes.push(supervise({
    name: 'gateway',
    ...tsx(config.rootDir, 'ingress-gateway/server.ts'),
    ...logged,
    ready: () => acceptsConnections(config.gatewayPort, config.host),
    env: {
      ...withoutVariables({ ...process.env, ...extraEnv }, ['ANTHROPIC_']),
      // The gateway checks prompts' models against the services' providers; it is told Anthropic is on, never its key.
      ...(servicesEnv.ANTHROPIC_API_KEY ? { ZIDANE_ANTHROPIC: 'on' } : {}),
      ZIDANE_SHELL_STATUS: JSON.stringify(shell),
      GATEWAY_PORT: String(config.gatewayPort),
      GATEWAY_HOST: config.host,
      RESTATE_INGRESS_URL: ingressUrl,
      RESTATE_ADMIN_URL: adminUrl,
      GATEWAY_ANSWER_SECRET: config.answerSecret,
      ZIDANE_LIVE_TOKEN: config.liveToken,
      ...(config.gatewayApiKeys ? { GATEWAY_API_KEYS: config.gatewayApiKeys } : {}),
    },
  }, onFatal))
  const gatewayUrl = `http://${config.host}:${config.gatewayPort}`
  await waitUntil(() => isHealthy(`${gatewayUrl}/healthz`), 120_000, 'the gateway')
  return { gatewayUrl, ingressUrl, adminUrl, processes, shell, stop }
}
