import type { FastifyPluginAsync } from 'fastify'
import type { RouteDependencies } from '../app'
import { watchClient } from '../client-watch'
import { EVENT_STREAM_HEADERS, streamEvents } from '../event-stream'
import { streamLiveEvents } from '../live-sse'
import { errorResponses, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { streamSlotsOf } from '../stream-slots'
import { sessionKey } from '../tenancy'

const schema = {
  summary: "Follow a session's events live (Server-Sent Events)",
  description:
    'Streams the session event log as SSE: `id: <seq>`, `event: <type>`, `data: <event JSON>`. Resumes after `Last-Event-ID` (or `?after=`). ' +
    'A comment every 15 s keeps the connection open; the stream ends when the client disconnects. While Restate is unreachable it sends one `gateway:error` event and keeps retrying. ' +
    "A session that does not exist yet can be followed too: the stream opens and waits for the session's first event, so a viewer can watch a run from its start (the session id is the key's own: another key's stream of the same id sees nothing of it). " +
    'New events are pushed: an idle session costs no polling. `HEAD` answers at once with the stream headers. ' +
    'While a model step runs, `model:delta` events (text and thinking, with `runId`, `turn`, `attempt`, `offset`, `text` and a child\'s `label`) stream live without an `id`; ' +
    '`model:superseded` says an earlier attempt of the step is void. The durable `turn:end` is authoritative. After the missed durable events, a viewer gets the attempt in progress from its start.',
  ...sessionRouteSchema,
  querystring: querySchema({ after: { type: 'integer', minimum: 0, maximum: 999_999_999_999_999, description: 'Send events with `seq` greater than this (at most 15 digits, as `Last-Event-ID`). `Last-Event-ID` wins when both are given.' } }),
  headers: { type: 'object', properties: { 'last-event-id': { type: 'string', pattern: '^[0-9]{1,15}$' } } },
  response: {
    200: { description: 'An endless `text/event-stream`.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...errorResponses,
  },
} as const

/**
 * `GET /v1/sessions/:sessionId/events`: the session's event log as a live SSE stream, also before the session exists
 * (it waits for the first event). An unknown id costs no state in Restate once its watch ends (see `unsubscribe` in
 * services/event-log/event-log-object.ts); the per-key stream cap and rate limit bound the watches parked meanwhile.
 */
export const sessionEventRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { auth, limits, live, eventLog }) => {
  const { source, feeds } = eventLog
  const openStreams = new Set<AbortController>()
  // Shared with the chat streams: the per-key cap counts every stream of this gateway.
  const slots = streamSlotsOf(limits)
  // Streams never end on their own; without this, closing the app would wait for every client to leave.
  app.addHook('preClose', async () => {
    for (const stream of openStreams) stream.abort()
  })
  app.get<{ Params: SessionParams; Querystring: { after?: number }; Headers: { 'last-event-id'?: string } }>('/v1/sessions/:sessionId/events', { onRequest: auth.requireApiKey, schema }, async (request, reply) => {
    const { tenant } = request
    const key = sessionKey(tenant, request.params.sessionId)
    if (request.method === 'HEAD') return reply.status(200).headers(EVENT_STREAM_HEADERS).send()
    const release = slots.take(tenant)
    // Watched from the start: a client that leaves during the first read below frees its slot and gets no stream.
    const client = watchClient(reply)
    const shutdown = new AbortController()
    openStreams.add(shutdown)
    try {
      const lastEventId = request.headers['last-event-id']
      const after = lastEventId === undefined ? (request.query.after ?? 0) : Number(lastEventId)
      // One read before the stream starts, so that Restate being unreachable is a JSON error (503), not a stream.
      await source.read(key, after, 1)
      reply.hijack()
      if (client.signal.aborted) return
      const gone = AbortSignal.any([client.signal, shutdown.signal])
      await streamEvents(reply.raw, feeds, source, key, after, gone, () => streamLiveEvents(reply.raw, live, key, gone))
    } finally {
      openStreams.delete(shutdown)
      client.dispose()
      release()
    }
  })
}
