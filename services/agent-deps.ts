import * as restate from '@restatedev/restate-sdk'
import type { AgentBehavior, ToolDef } from 'zidane'
import type { DurableRuntime } from 'zidane/durable'
import type { Provider } from 'zidane/providers'
import { restateRuntime, restateSpawnTool } from 'zidane/restate'
import type { RestateContextLike, RestateRuntimeOptions, RestateSpawnToolOptions } from 'zidane/restate'
import type { SessionStore } from 'zidane/session'
import { builtinWorkspace, workspaceOutputWriter } from 'zidane/tools'
import { CHILD_SERVICE } from '../contract/session'
import type { PromptToolPolicy, RunSettings } from '../contract/session'
import type { ChildService } from './child-runner/child-service'
import type { ServicesConfig } from './config'
import type { EventDoorbell } from './event-log/event-doorbell'
import type { EventSink } from './event-log/session-events'
import type { LiveHub } from './live/live-hub'
import type { McpOffer } from './mcp-servers'
import type { SpanSink } from './telemetry/span-record'
import type { ToolOffer } from './tool-selection'
import { tenantOfSessionKey } from './workspace'

/** What the handlers that run agents (a session's runs, a sub-agent's) get from their composition. */
export interface AgentDeps {
  config: ServicesConfig
  /** The environment of the settings outside `config` (the model's name, the tools' limits). */
  env: NodeJS.ProcessEnv
  provider: Provider
  liveHub: LiveHub
  doorbell: EventDoorbell | undefined
  tools: ToolOffer
  /** The operator's MCP servers (`ZIDANE_MCP_SERVERS`, `ZIDANE_MCP_CONFIG`) and this process's connections to them. */
  mcp: McpOffer
  /** Runtime options of every run: the crash guard, and a test's probes. */
  runtimeOptions: Pick<RestateRuntimeOptions, 'crashGuard' | 'onBoundary' | 'stepObserver'>
  /** Where the runs' spans go (`traceAgentRun`); none when traces are off. */
  tracing: SpanSink | undefined
}

/** The durable runtime of one agent invocation, its sessions in `sessionStore`, ids seeded with `idSeed`. */
export function agentRuntime(ctx: RestateContextLike, deps: AgentDeps, idSeed: string, sessionStore: SessionStore): DurableRuntime {
  return restateRuntime(ctx, { promises: restate.RestatePromise, idSeed, sessionStore, ...deps.runtimeOptions })
}

/**
 * Where a run in workspace `root` of session (or tree) `sessionKey` keeps tool outputs over 256 KiB: the operator's
 * `ZIDANE_PERSIST_DIR` when set (a folder no tenant can reach), else `tool-results/` of the workspace, written by its
 * sandboxed file worker so a link the tenant planted there is refused instead of followed by this process.
 */
export function agentOutputs(deps: AgentDeps, root: string, sessionKey: string): Pick<AgentBehavior, 'persistDir' | 'persistOutput'> {
  if (deps.config.persistDir !== undefined) return { persistDir: deps.config.persistDir }
  return { persistOutput: workspaceOutputWriter(builtinWorkspace(deps.tools.options(root, tenantOfSessionKey(sessionKey)))) }
}

/**
 * `spawn` of a run with `settings`: every child gets them and the prompt's tool `policy`, and the run's `events` are
 * synced first (the child appends its own, and the run may wait on it).
 */
export function agentSpawnTool(ctx: restate.Context, events: EventSink, settings: RunSettings, policy: PromptToolPolicy | undefined, options: Omit<RestateSpawnToolOptions, 'dispatch'>): ToolDef {
  const Child: ChildService = { name: CHILD_SERVICE }
  return restateSpawnTool({
    ...options,
    dispatch: (request) => {
      events.flush()
      return ctx.serviceClient(Child).run({ ...request, settings, ...(policy ? { policy } : {}) })
    },
  })
}

/**
 * The Restate options of the handlers that run agents: the timeouts, and Restate's retry policy bounded to
 * `maxAttempts` (`ZIDANE_MAX_ATTEMPTS`; unbounded: the server's policy whole), then kill. Kill, not pause: a paused
 * invocation keeps its session's lock, so later prompts would queue until an operator acts; killed, the session's
 * next run records it `failed` (`endKilledRuns`). It is the backstop for what the crash guard cannot see (a crash
 * outside any step); the other services keep unlimited attempts, since killing them would lose a message or an event.
 */
export function agentHandlerOptions(config: ServicesConfig): { inactivityTimeout: number; abortTimeout: number; retryPolicy?: restate.RetryPolicy } {
  const retry = config.maxAttempts === undefined ? {} : { retryPolicy: { maxAttempts: config.maxAttempts, onMaxAttempts: 'kill' as const } }
  return { inactivityTimeout: config.inactivityTimeoutMs, abortTimeout: config.abortTimeoutMs, ...retry }
}
