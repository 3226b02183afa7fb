import * as restate from '@restatedev/restate-sdk'
import type { AgentBehavior } from 'zidane'
import type { DurableRuntime } from 'zidane/durable'
import type { Provider } from 'zidane/providers'
import { restateRuntime } from 'zidane/restate'
import type { RestateContextLike, RestateRuntimeOptions } from 'zidane/restate'
import type { SessionStore } from 'zidane/session'
import { agentRetryPolicy } from './agent-retry-policy'
import type { ServicesConfig } from './config'
import type { EventDoorbell } from './event-log/event-doorbell'
import type { LiveHub } from './live/live-hub'
import { sessionOutputs } from './session-outputs'
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
  /** Runtime options of every run: the crash guard, and a test's probes. */
  runtimeOptions: Pick<RestateRuntimeOptions, 'crashGuard' | 'onBoundary' | 'stepObserver'>
}

/** The durable runtime of one agent invocation, its sessions in `sessionStore`, ids seeded with `idSeed`. */
export function agentRuntime(ctx: RestateContextLike, deps: AgentDeps, idSeed: string, sessionStore: SessionStore): DurableRuntime {
  return restateRuntime(ctx, { promises: restate.RestatePromise, idSeed, sessionStore, ...deps.runtimeOptions })
}

/** Where a run in workspace `root` of session (or tree) `sessionKey` keeps its large tool outputs. */
export function agentOutputs(deps: AgentDeps, root: string, sessionKey: string): Pick<AgentBehavior, 'persistDir' | 'persistOutput'> {
  return sessionOutputs(deps.config.persistDir, deps.tools.options(root, tenantOfSessionKey(sessionKey)))
}

/** The Restate options of the handlers that run agents: the timeouts and the bounded attempts (`agentRetryPolicy`). */
export function agentHandlerOptions(config: ServicesConfig): { inactivityTimeout: number; abortTimeout: number; retryPolicy?: restate.RetryPolicy } {
  return { inactivityTimeout: config.inactivityTimeoutMs, abortTimeout: config.abortTimeoutMs, ...agentRetryPolicy(config.maxAttempts) }
}
