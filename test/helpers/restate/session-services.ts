import type * as restate from '@restatedev/restate-sdk'
import type { ReadEventsResult } from '../../../contract/event-log'
import { createServices } from '../../../services/composition'
import type { ServicesOptions } from '../../../services/composition'
import { loadServicesConfig } from '../../../services/config'
import type { EventDoorbell } from '../../../services/event-log/event-doorbell'
import { createEventDoorbell } from '../../../services/event-log/event-doorbell'
import type { RestateHarness } from './restate-harness'

/**
 * The deployment's services (session, child, resumer, inbox, the event log and its watch, admission, live replicas),
 * built by `createServices` from the test process's environment with `env` over it.
 */
export function loadSessionServices(env: Record<string, string> = {}, options: Omit<ServicesOptions, 'env'> = {}): restate.ServiceDefinition<string, unknown>[] {
  const merged = { ...process.env, ...env }
  return createServices(loadServicesConfig(merged), { env: merged, ...options }).definitions
}

/**
 * An event doorbell whose ingress is set once the test's server is up (`connect`); it rings nothing before.
 * `followed` stands for the services' live hub (`EventDoorbellOptions.followed`).
 */
export function lateDoorbell(followed?: (logKey: string) => boolean): { doorbell: EventDoorbell; connect(ingressUrl: string): void } {
  let real: EventDoorbell | undefined
  return {
    doorbell: {
      ring: (logKey, state, laterMs) => real?.ring(logKey, state, laterMs),
      covered: (logKey, state) => real?.covered(logKey, state),
      idle: async () => real?.idle(),
      calls: () => real?.calls() ?? 0,
    },
    connect: (ingressUrl) => { real = createEventDoorbell({ ingressUrl, ...(followed ? { followed } : {}) }) },
  }
}

/** The event log of `key` once `done` holds for its events (one-way sends may land just after a run's result). */
export async function readEventsUntil(harness: RestateHarness, key: string, done: (events: ReadEventsResult['events']) => boolean): Promise<ReadEventsResult['events']> {
  return harness.waitFor(async () => {
    const read = await harness.call<ReadEventsResult>(`events/${key}/read`, { after: 0 })
    return done(read.body.events) ? read.body.events : undefined
  }, 10_000, `the events of ${key}`)
}
