import type * as restate from '@restatedev/restate-sdk'
import type { RestateRuntimeOptions } from 'zidane/restate'
import { admissionObject } from './admission/admission-object'
import type { AgentDeps } from './agent-deps'
import { sessionObject } from './agent-object/session-object'
import type { SessionObjectOptions } from './agent-object/session-object'
import { childService } from './child-runner/child-service'
import type { ServicesConfig } from './config'
import type { EventDoorbell } from './event-log/event-doorbell'
import { eventLogObject, eventWatchService } from './event-log/event-log-object'
import { servicesDoorbell } from './event-log/services-doorbell'
import { inboxObject } from './inbox/inbox-object'
import { createLiveHub } from './live/live-hub'
import type { LiveHub } from './live/live-hub'
import { liveReplicasObject } from './live/replica-registry-object'
import { servicesProvider } from './model-provider'
import { resumerObject } from './resumer/resumer-object'
import type { ShellStatus } from './shell-policy'
import { stepCrashGuard } from './step-crashes'
import { createToolOffer } from './tool-selection'

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
}

/** The services one process serves, and what its entry needs besides them. */
export interface Services {
  definitions: restate.ServiceDefinition<string, unknown>[]
  /** The hub the agent handlers publish their live deltas to: the live server serves it. */
  liveHub: LiveHub
  doorbell: EventDoorbell | undefined
  /** How `shell` runs (reported at start-up). */
  shell: ShellStatus
}

/**
 * Builds every handler of the services from `config` and `options`, with their dependencies (the model, the live
 * hub, the event doorbell, the crash guard, the tool offer) made once here: the one composition root. It reads no
 * environment of its own and serves nothing (`services/endpoint.ts` does).
 */
export function createServices(config: ServicesConfig, options: ServicesOptions): Services {
  const tools = createToolOffer(options.env)
  const deps: AgentDeps = {
    config,
    env: options.env,
    provider: servicesProvider(options.env),
    liveHub: createLiveHub(),
    doorbell: options.doorbell ?? servicesDoorbell(config),
    tools,
    runtimeOptions: { ...stepCrashGuard(config), ...options.runtimeOptions },
  }
  const agents = [sessionObject(deps, options.session), childService(deps)]
  const others = [resumerObject, inboxObject, eventLogObject, eventWatchService, admissionObject, liveReplicasObject({ token: options.liveToken })]
  const definitions = [...agents, ...others] as restate.ServiceDefinition<string, unknown>[]
  return { definitions, liveHub: deps.liveHub, doorbell: deps.doorbell, shell: tools.shell.status }
}
