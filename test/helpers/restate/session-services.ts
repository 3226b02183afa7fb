import { vi } from 'vitest'
import type { ReadEventsResult } from '../../../contract/event-log'
import type { RestateHarness } from './restate-harness'

/**
 * The deployment's session services (session, child, resumer, inbox, the event log and its watch), loaded afresh with
 * `env` set while they load: they read their settings from the environment then. The variables are removed again
 * afterwards (set one in the test itself when the services also read it later, as the event doorbell reads
 * `RESTATE_INGRESS_URL` on its first run).
 */
export async function loadSessionServices(env: Record<string, string> = {}): Promise<unknown[]> {
  vi.resetModules()
  Object.assign(process.env, env)
  try {
    const { sessionObject } = await import('../../../services/agent-object/session-object')
    const { childService } = await import('../../../services/child-runner/child-service')
    const { resumerObject } = await import('../../../services/resumer/resumer-object')
    const { inboxObject } = await import('../../../services/inbox/inbox-object')
    const { eventLogObject, eventWatchService } = await import('../../../services/event-log/event-log-object')
    return [sessionObject, childService, resumerObject, inboxObject, eventLogObject, eventWatchService]
  } finally {
    for (const name of Object.keys(env)) Reflect.deleteProperty(process.env, name)
  }
}

/** The event log of `key` once `done` holds for its events (one-way sends may land just after a run's result). */
export async function readEventsUntil(harness: RestateHarness, key: string, done: (events: ReadEventsResult['events']) => boolean): Promise<ReadEventsResult['events']> {
  return harness.waitFor(async () => {
    const read = await harness.call<ReadEventsResult>(`events/${key}/read`, { after: 0 })
    return done(read.body.events) ? read.body.events : undefined
  }, 10_000, `the events of ${key}`)
}
