import * as clients from '@restatedev/restate-sdk-clients'
import { eventLogInterface, eventWatchInterface } from '../contract/interfaces'
import { restateCall, type RestateIngress } from './restate-ingress'
import type { EventLogSource } from './session-feeds'

/** The session event logs through the ingress: `events/<key>/read` (shared), and `event_watch/wait` parked in Restate. */
export function eventLogSource(ingress: RestateIngress): EventLogSource {
  return {
    read: (key, after, limit) => restateCall(() => ingress.client.client(eventLogInterface, key).read({ after, limit })),
    // Held open while the watch is parked: the call's own deadline is the watch's plus a 10 s margin.
    watch: (key, after, timeoutMs, signal) => {
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs + 10_000)])
      return restateCall(() => ingress.client.client(eventWatchInterface).wait({ key, after, timeoutMs }, clients.rpc.opts({ signal: deadline })))
    },
  }
}
