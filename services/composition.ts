import { join } from 'node:path'
import type * as restate from '@restatedev/restate-sdk'
import { createFileCrashLog } from 'zidane/restate'
import type { RestateRuntimeOptions } from 'zidane/restate'
import type { FileWorkerPool, FileWorkerPoolOptions } from 'zidane/tools'
import { admissionObject } from './admission/admission-object'
import type { AgentDeps } from './agent-deps'
import { sessionObject } from './agent-object/session-object'
import type { SessionObjectOptions } from './agent-object/session-object'
import { childService } from './child-runner/child-service'
import type { ServicesConfig } from './config'
import type { EventDoorbell } from './event-log/event-doorbell'
import { eventLogObject, eventWatchService } from './event-log/event-log-object'
import { createEventDoorbell } from './event-log/event-doorbell'
import { inboxObject } from './inbox/inbox-object'
import { createLiveHub } from './live/live-hub'
import type { LiveHub } from './live/live-hub'
import { liveReplicasObject, liveReplicasWatchService } from './live/replica-registry-object'
import { resumerObject } from './resumer/resumer-object'
import { sessionIndexObject } from './session-index/session-index-object'
import type { ShellStatus } from './shell-policy'
import { createToolOffer } from './tool-selection'
import { createServicesFileWorkers, withFileWorkers } from './workspace-workers'
import { modelProvider } from './model-providers'
import { createMcpOffer } from './mcp-servers'
import { createOtlpTracing } from './telemetry/otlp-tracing'
import type { Tracing } from './telemetry/span-record'
import { loadTelemetryConfig } from './telemetry/telemetry-config'

/** What `createServices` builds the services from besides their `ServicesConfig`. */
export interface ServicesOptions {
  /** The environment of the settings outside `ServicesConfig`: the model, the tools and the sandbox. */
  env: NodeJS.ProcessEnv
  /** Bearer token the live replicas' registry requires (`LiveConfig.token`). */
  liveToken?: string | undefined
  /** Runtime options every agent run gets besides the crash guard: a test's probes (`onBoundary`, `stepObserver`). */
  runtimeOptions?: Pick<RestateRuntimeOptions, 'onBoundary' | 'stepObserver'>
  /** A doorbell to use instead of the one `ServicesConfig.ingressUrl` gives (a test's, pointed at its server later). */
  doorbell?: EventDoorbell
  /** Options of the session object (a test's extra first step of `run`). */
  session?: SessionObjectOptions
  /** Where the agent runs' spans go instead of the OTLP exporter the environment names (a test's). */
  tracing?: Tracing
  /** Bounds of the file tools' shared warm workers over `SERVICES_FILE_WORKERS`, and a test's probe of their starts. */
  fileWorkers?: FileWorkerPoolOptions
}

/** The services one process serves, and what its entry needs besides them. */
export interface Services {
  definitions: restate.ServiceDefinition<string, unknown>[]
  /** The hub the agent handlers publish their live deltas to: the live server serves it. */
  liveHub: LiveHub
  doorbell: EventDoorbell | undefined
  /** How `shell` runs (reported at start-up). */
  shell: ShellStatus
  /** The operator's MCP servers as `<name> (<transport>)`, for the start-up report (no credential). */
  mcpServers: string[]
  /** The traces' exporter, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a test) gives one: flushed at shutdown. */
  tracing: Tracing | undefined
  /**
   * The file tools' warm workers, shared by the runs of each tenant's folder. Their processes are running commands,
   * so `stopRunningCommands` at shutdown kills them; `close` also fails the calls still waiting for one.
   */
  fileWorkers: FileWorkerPool
}

/**
 * Builds every handler of the services from `config` and `options`, with their dependencies (the model, the live
 * hub, the event doorbell, the crash guard, the tool offer and its warm file workers) made once here: the one composition root. It reads no
 * environment of its own and serves nothing (`services/endpoint.ts` does).
 */
export function createServices(config: ServicesConfig, options: ServicesOptions): Services {
  const fileWorkers = createServicesFileWorkers(options.fileWorkers, options.env)
  const tools = withFileWorkers(createToolOffer(options.env), fileWorkers, config.workspaceRoot)
  const tracing = options.tracing ?? otlpTracing(options.env)
  const liveHub = createLiveHub()
  const deps: AgentDeps = {
    config,
    env: options.env,
    provider: modelProvider(options.env),
    liveHub,
    doorbell: options.doorbell ?? eventDoorbell(config, liveHub),
    tools,
    mcp: createMcpOffer(options.env, tools.capability),
    runtimeOptions: { ...stepCrashGuard(config), ...options.runtimeOptions },
    tracing,
  }
  const agents = [sessionObject(deps, options.session), childService(deps)]
  const others = [resumerObject, inboxObject, eventLogObject, eventWatchService, admissionObject, liveReplicasObject({ token: options.liveToken }), liveReplicasWatchService, sessionIndexObject({ retentionMs: config.sessionRetentionMs })]
  const definitions = [...agents, ...others] as restate.ServiceDefinition<string, unknown>[]
  const mcpServers = deps.mcp.servers.map(server => `${server.name} (${server.transport}${server.tenants ? `, ${server.tenants.length} tenants` : ''})`)
  return { definitions, liveHub: deps.liveHub, doorbell: deps.doorbell, shell: tools.shell.status, mcpServers, tracing, fileWorkers }
}

/** The OTLP exporter of the agent runs' spans, when the environment names an endpoint (docs/traces.md); else none, at no cost. */
function otlpTracing(env: NodeJS.ProcessEnv): Tracing | undefined {
  const config = loadTelemetryConfig(env)
  return config ? createOtlpTracing(config) : undefined
}

/**
 * The crash guard of the agent runs' steps (`RestateRuntimeOptions.crashGuard`), none when `maxStepCrashes` is off.
 * Its counts live on the shared workspace root, so the replica that runs a retry sees the counts the dead one left.
 */
function stepCrashGuard(config: ServicesConfig): Pick<RestateRuntimeOptions, 'crashGuard'> {
  if (config.maxStepCrashes === undefined) return {}
  return { crashGuard: { log: createFileCrashLog(join(config.workspaceRoot, '.step-crashes')), maxCrashes: config.maxStepCrashes } }
}

/**
 * The event doorbell towards `ingressUrl`; none when unset (the logs then catch up at the runs' journaled syncs). A log
 * whose session a gateway follows through `liveHub` is rung at once, without waiting to learn that from a sync.
 * One warning a minute while calls fail: their writes still reach the log, at the next sync.
 */
function eventDoorbell(config: ServicesConfig, liveHub: LiveHub): EventDoorbell | undefined {
  if (!config.ingressUrl) return undefined
  let failing = false
  const onError = (error: unknown): void => {
    if (failing) return
    failing = true
    console.warn(`[events] a doorbell call failed (the run's next journaled sync brings its events): ${error instanceof Error ? error.message : String(error)}`)
    setTimeout(() => { failing = false }, 60_000).unref()
  }
  return createEventDoorbell({ ingressUrl: config.ingressUrl, windowMs: config.eventWindowMs, followed: logKey => liveHub.followed(logKey), onError })
}
