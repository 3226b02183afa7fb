import type { FastifyPluginAsync } from 'fastify'
import type { RouteDependencies } from '../app'
import { watchClient } from '../client-watch'
import { AG_UI_CAPABILITIES } from '../protocols/ag-ui-capabilities'
import { AgUiMapping } from '../protocols/ag-ui-events'
import { planAgUiRun } from '../protocols/ag-ui-plan'
import { parseRunAgentInput, runAgentInputSchema } from '../protocols/ag-ui-request'
import { AG_UI_STREAM_HEADERS, pipeAgUiEvents } from '../protocols/ag-ui-sse'
import { bearerSecurity, errorResponses, passThroughObject, querySchema } from '../schemas'
import { streamSlotsOf } from '../stream-slots'
import { sessionKey } from '../tenancy'

const postSchema = {
  summary: 'Run the agent of a session over AG-UI (`@ag-ui/client` `HttpAgent`)',
  description:
    'The AG-UI protocol 1.0 over SSE (`data: <event JSON>` frames). `threadId` is the session id. The newest user message is the prompt: it starts a run, ' +
    'or, while a run is in progress, steers it with `forwardedProps.mode: "steer"` (409 `run_active` otherwise). `resume` answers the interrupts a run ended with ' +
    '(questions, plan confirmations, tool approvals; by their ids) and streams the continuation. With neither, the latest run streams (a reconnect). ' +
    'Every stream opens with `RUN_STARTED` and a `MESSAGES_SNAPSHOT` of the session, and ends with `RUN_FINISHED` (success, cancelled, or interrupt) or `RUN_ERROR`. ' +
    'Leaving the stream never cancels the run. See docs/protocols/ag-ui.md.',
  tags: ['ag-ui'],
  security: bearerSecurity,
  querystring: querySchema({}),
  body: runAgentInputSchema,
  response: {
    200: { description: 'An AG-UI event stream (`text/event-stream`).', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...errorResponses,
  },
} as const

const capabilitiesSchema = {
  summary: 'What the AG-UI endpoint supports (`AgentCapabilities`)',
  tags: ['ag-ui'],
  security: bearerSecurity,
  querystring: querySchema({}),
  response: { 200: passThroughObject, ...errorResponses },
} as const

/** `POST /v1/ag-ui` (an AG-UI run of a session, as SSE) and `GET /v1/ag-ui/capabilities`. */
export const agUiRoutes: FastifyPluginAsync<RouteDependencies> = async (app, dependencies) => {
  const { auth, limits, timeline } = dependencies
  const slots = streamSlotsOf(limits)
  const openStreams = new Set<AbortController>()
  // Streams of a long run outlive any request; without this, closing the app would wait for every client to leave.
  app.addHook('preClose', async () => {
    for (const stream of openStreams) stream.abort()
  })

  app.get('/v1/ag-ui/capabilities', { onRequest: auth.requireApiKey, schema: capabilitiesSchema }, async () => AG_UI_CAPABILITIES)

  app.post<{ Body: unknown }>('/v1/ag-ui', { onRequest: auth.requireApiKey, schema: postSchema }, async (request, reply) => {
    const input = parseRunAgentInput(request.body)
    const release = slots.take(request.tenant)
    // Watched from the start: a client that leaves while its run is admitted gets no stream (the run goes on).
    const client = watchClient(reply)
    const shutdown = new AbortController()
    openStreams.add(shutdown)
    try {
      const plan = await planAgUiRun(dependencies, request.tenant, input)
      reply.hijack()
      if (client.signal.aborted) return
      const done = new AbortController()
      const signal = AbortSignal.any([client.signal, shutdown.signal, done.signal])
      reply.raw.writeHead(200, AG_UI_STREAM_HEADERS)
      try {
        const items = timeline.follow(sessionKey(request.tenant, input.threadId), { after: plan.after, signal })
        await pipeAgUiEvents(reply.raw, plan.opening, items, new AgUiMapping(plan.mapping), signal)
      } finally {
        done.abort()
      }
    } finally {
      openStreams.delete(shutdown)
      client.dispose()
      release()
    }
  })
}
