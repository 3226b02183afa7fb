import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { admissionInterface } from '../../contract/admission'
import { sessionInterface } from '../../contract/interfaces'
import type { RouteDependencies } from '../app'
import { watchClient } from '../client-watch'
import { UI_MESSAGE_STREAM_HEADERS, pipeUiMessageStream, type UiStreamTarget } from '../protocols/ui-message-sse'
import type { ChatRequestBody } from '../protocols/ui-message-request'
import { chatRequestSchema } from '../protocols/ui-message-request'
import { restateCall } from '../restate-ingress'
import { errorResponses, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { streamSlotsOf } from '../stream-slots'
import { sessionKey } from '../tenancy'
import { planChat } from './chat-plan'

const streamResponse = {
  description: 'An AI SDK UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`): `data: <chunk JSON>` frames, then `data: [DONE]`.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
} as const

const postSchema = {
  summary: 'Chat with a session (AI SDK `useChat`)',
  description:
    "The AI SDK UI message stream protocol v1, for `useChat`'s `DefaultChatTransport`. The newest user message's text starts a run (or, while a run is running, " +
    "steers it); an assistant message last with tool parts in state `approval-responded` answers those approvals and streams the run's continuation. " +
    'The stream ends when the run ends (`finish`, `abort` when cancelled) or asks for an approval (`tool-approval-request`, then `finish`). ' +
    'Leaving the stream never cancels the run: cancel with `POST /v1/sessions/{sessionId}/cancel`. See docs/protocols/ai-sdk.md.',
  ...sessionRouteSchema,
  querystring: querySchema({}),
  body: chatRequestSchema,
  response: { 200: streamResponse, ...errorResponses },
} as const

const resumeSchema = {
  summary: "Resume a session's chat stream (AI SDK `useChat({ resume: true })`)",
  description: "The active run's UI message stream from the run's start; 204 when no run is active (a session this key never ran included). A run waiting for an approval replays up to its `tool-approval-request` and ends.",
  ...sessionRouteSchema,
  querystring: querySchema({}),
  response: { 200: streamResponse, 204: { description: 'No run is active.', type: 'null' }, ...errorResponses },
} as const

/**
 * Whether a run of the session is coming whose start is not in the log yet: a prompt the tenant's admission started
 * (a reload right after sending can ask before the run began) that is not the session's current invocation already
 * ended, or a current invocation that is running.
 */
async function runComing({ ingress }: RouteDependencies, tenant: string, key: string): Promise<boolean> {
  const [admitted, current] = await Promise.all([
    restateCall(() => ingress.client.client(admissionInterface, tenant).admittedPrompts(key)),
    restateCall(() => ingress.client.client(sessionInterface, key).invocation()),
  ])
  if (current?.status === 'running') return true
  return admitted.some(invocationId => invocationId !== current?.invocationId)
}

/** The AI SDK UI message stream routes (`useChat`): `POST /v1/sessions/:sessionId/chat` and `GET …/chat/stream`. */
export const chatRoutes: FastifyPluginAsync<RouteDependencies> = async (app, dependencies) => {
  const { auth, limits, timeline } = dependencies
  const slots = streamSlotsOf(limits)
  const openStreams = new Set<AbortController>()
  // Streams of a long run outlive any request; without this, closing the app would wait for every client to leave.
  app.addHook('preClose', async () => {
    for (const stream of openStreams) stream.abort()
  })

  /** Takes a stream slot, runs `prepare`, then streams what it returned; frees the slot however it ends. */
  const stream = async (request: FastifyRequest, reply: FastifyReply, prepare: () => Promise<{ after: number; target: UiStreamTarget }>): Promise<void> => {
    const release = slots.take(request.tenant)
    // Watched from the start: a client that leaves while its request is prepared gets no stream (the run goes on).
    const client = watchClient(reply)
    const shutdown = new AbortController()
    openStreams.add(shutdown)
    try {
      const plan = await prepare()
      reply.hijack()
      if (client.signal.aborted) return
      const done = new AbortController()
      const signal = AbortSignal.any([client.signal, shutdown.signal, done.signal])
      reply.raw.writeHead(200, UI_MESSAGE_STREAM_HEADERS)
      try {
        await pipeUiMessageStream(reply.raw, timeline.follow(sessionKey(request.tenant, (request.params as SessionParams).sessionId), { after: plan.after, signal }), plan.target, signal)
      } finally {
        done.abort()
      }
    } finally {
      openStreams.delete(shutdown)
      client.dispose()
      release()
    }
  }

  app.post<{ Params: SessionParams; Body: ChatRequestBody }>('/v1/sessions/:sessionId/chat', { onRequest: auth.requireApiKey, schema: postSchema }, async (request, reply) =>
    stream(request, reply, () => planChat(dependencies, request.tenant, request.params.sessionId, request.body)))

  app.get<{ Params: SessionParams }>('/v1/sessions/:sessionId/chat/stream', { onRequest: auth.requireApiKey, schema: resumeSchema }, async (request, reply) => {
    const key = sessionKey(request.tenant, request.params.sessionId)
    // A page resumes on every load, a new chat's too: a session this key never ran (another key's included, which
    // is the same to this key) has no active run either, 204, so nothing leaks and nothing errs.
    const run = await timeline.latestRun(key)
    const active = run !== undefined && !run.ended
    // A run admitted or started whose start is not in the log yet (a reload right after sending) is the first run to
    // start after the latest one.
    if (!active && !(await runComing(dependencies, request.tenant, key))) return reply.status(204).send()
    if (request.method === 'HEAD') return reply.status(200).headers(UI_MESSAGE_STREAM_HEADERS).send()
    const plan = active ? { after: run.startSeq - 1, target: { runId: run.runId } } : { after: run?.startSeq ?? 0, target: {} }
    return stream(request, reply, async () => plan)
  })
}
