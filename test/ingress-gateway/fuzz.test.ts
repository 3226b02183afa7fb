import { Ajv, type ValidateFunction } from 'ajv'
import fc, { type Arbitrary } from 'fast-check'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GATEWAY_ERROR_CODES } from '../../ingress-gateway/errors'
import { startFakeRestate, type FakeResponse, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'
import { fuzzedHeader, fuzzedValue, hostileValue, validValue, type JsonSchemaLike } from './helpers/schema-arbitrary'

// A property-based fuzz of every route in the OpenAPI document, against a stand-in Restate that answers every call
// plausibly: whatever a client sends, the gateway answers no 5xx, only documented statuses, and bodies that match the
// documented schema (errors in the `{ error: { code, message } }` shape, with the status of their code).

interface Parameter { in: 'path' | 'query' | 'header'; name: string; schema: JsonSchemaLike }
interface Operation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: JsonSchemaLike }> }
  responses: Record<string, { content?: Record<string, { schema: object }> }>
}
interface Route { method: string; path: string; operation: Operation }

// Long enough for the 2,000 requests on a loaded machine (about 4 s alone): the last check needs a 2xx on every route.
const TIME_LIMIT_MS = 10_000

/** The stand-in Restate: every ingress and admin call gets a plausible success. */
function plausibleRestate(request: RecordedRequest): FakeResponse {
  const { path } = request
  // Like Restate's ingress, refuse an idempotency key that is not a visible ASCII string.
  const idempotencyKey = request.headers['idempotency-key']
  if (idempotencyKey !== undefined && !/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(String(idempotencyKey))) return { status: 400, body: { message: 'bad idempotency key' } }
  if (path.endsWith('/health')) return { status: 200, body: {} }
  if (path.startsWith('/admin/query')) return { status: 200, body: { rows: sqlRows((request.body as { query: string }).query) } }
  if (path.startsWith('/admin/invocations/')) return { status: 202 }
  if (path.startsWith('/resumer/') && path.endsWith('/answer')) return { status: 200, body: { outcome: 'answered' } }
  if (path.endsWith('/admit')) return { status: 200, body: { outcome: 'admitted', invocationId: 'inv_run', queued: false } }
  if (path.endsWith('/steer')) return { status: 200, body: { outcome: 'saved', messageId: 'inv_msg' } }
  if (path.endsWith('/failedRun')) return { status: 200, body: null }
  if (path.endsWith('/list')) return { status: 200, body: { entries: [{ id: 's1', seq: 2, status: 'completed', lastActivityAt: 2, createdAt: 1, turns: 2, costUsd: 0.01, pending: 0 }], nextBefore: 2 } }
  if (path.endsWith('/erase')) return { status: 200, body: { existed: true, erased: true } }
  if (path.includes('/attach')) return { status: 200, body: { status: 'completed', text: 'done', stats: { turns: 1 } } }
  if (path.endsWith('/invocation')) return { status: 200, body: { invocationId: 'inv_run', status: 'running', startedAt: 1 } }
  if (path.endsWith('/read')) return { status: 200, body: { events: [{ seq: 1, type: 'run:start', at: 1, data: {} }], count: 1 } }
  if (path === '/event_watch/wait') return { status: 200, body: { count: null } }
  if (path.endsWith('/get')) return { status: 200, body: { exists: true, id: 'x', status: 'idle', turns: [], runs: [], usage: EMPTY_TOTALS, pending: [], counts: { turns: 0, runs: 0 }, page: { from: 0, to: 0, total: 0, limit: 50, nextTurnsAfter: null, previousTurnsAfter: null } } }
  return { status: 200, body: null }
}

const EMPTY_TOTALS = { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 }

/** Rows of the admin API's SQL (only cancel reads it): the session's lock is held, so a cancel finds a run. */
function sqlRows(query: string): unknown[] {
  if (query.includes('FROM sys_keyed_service_status ')) return [{ invocation_id: 'inv_run' }]
  return []
}

/** A JSON body whose values nest thousands of levels deep (valid JSON; too deep to forward). */
function deepJson(): Arbitrary<string> {
  return fc.integer({ min: 65, max: 20_000 }).map((depth) => `{"answer":${'['.repeat(depth)}${']'.repeat(depth)},"prompt":${'['.repeat(depth)}${']'.repeat(depth)}}`)
}

/**
 * Valid bodies the schema alone does not draw: a chat request's prompt is the text of a `{ type: 'text', text }` part
 * of its newest user message, which random part types almost never spell.
 */
const SEED_BODIES: Record<string, Arbitrary<unknown>> = {
  '/v1/ag-ui': fc.record({
    threadId: fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), runId: fc.string({ minLength: 1, maxLength: 20 }),
    messages: fc.tuple(fc.record({ id: fc.string({ minLength: 1, maxLength: 10 }), role: fc.constant('user'), content: fc.string({ minLength: 1, maxLength: 40 }).filter(text => text.trim() !== '') })),
    forwardedProps: fc.oneof(fc.constant({ mode: 'steer' }), fc.constant({ subagents: true }), fc.constant({})),
  }),
  '/v1/sessions/{sessionId}/chat': fc.record({ messages: fc.tuple(fc.record({ role: fc.constant('user'), parts: fc.tuple(fc.record({ type: fc.constant('text'), text: fc.string({ minLength: 1, maxLength: 40 }).filter(text => text.trim() !== '') })) })) }),
}

function routesOf(document: { paths: Record<string, Record<string, Operation>> }): Route[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })))
}

/**
 * A drawn value as URL text. `String()` is not enough: a drawn JSON object may carry a `toString` or `valueOf` key,
 * and then it cannot be turned into a primitive at all.
 */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
}

function requestFor(route: Route): Arbitrary<InjectOptions> {
  const parameters = route.operation.parameters ?? []
  const byPlace = (place: Parameter['in']): Parameter[] => parameters.filter((parameter) => parameter.in === place)
  const pathValues = fc.tuple(...byPlace('path').map((parameter) => fuzzedValue(parameter.schema).map((value) => (value === undefined ? 'x' : asText(value)))))
  const queryValues = fc.tuple(...byPlace('query').map((parameter) => fc.oneof(fuzzedValue(parameter.schema), fc.constant(undefined))))
  const headerValues = fc.tuple(...byPlace('header').map((parameter) => fuzzedHeader(parameter.schema)))
  const bodySchema = route.operation.requestBody?.content['application/json']?.schema
  const seed = SEED_BODIES[route.path]
  const valid = seed === undefined ? validValue(bodySchema ?? {}) : fc.oneof(validValue(bodySchema ?? {}), seed)
  const body = bodySchema === undefined ? fc.constant(undefined) : fc.oneof({ weight: 4, arbitrary: valid }, { weight: 2, arbitrary: fuzzedValue(bodySchema) }, { weight: 1, arbitrary: hostileValue().map((value) => JSON.stringify(value)) }, { weight: 1, arbitrary: deepJson() })
  const authorization = fc.oneof({ weight: 8, arbitrary: fc.constant(bearer(KEY_A)) }, fc.constant(bearer(KEY_B)), fc.constant({}), fc.string().map((text) => ({ authorization: `Bearer ${text.replace(/[^\x20-\x7e]/g, '')}` })))
  const contentType = fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, fc.constantFrom('application/json; charset=utf-8', 'text/plain', undefined))
  return fc.record({ pathValues, queryValues, headerValues, body, authorization, contentType }).map((drawn) => {
    let url = route.path
    byPlace('path').forEach((parameter, index) => { url = url.replace(`{${parameter.name}}`, encodeURIComponent(drawn.pathValues[index] ?? '')) })
    const query = new URLSearchParams()
    byPlace('query').forEach((parameter, index) => { if (drawn.queryValues[index] !== undefined) query.set(parameter.name, asText(drawn.queryValues[index])) })
    const headers: Record<string, string> = { ...drawn.authorization }
    byPlace('header').forEach((parameter, index) => { const value = drawn.headerValues[index]; if (value !== undefined) headers[parameter.name] = value })
    if (drawn.contentType !== undefined && drawn.body !== undefined) headers['content-type'] = drawn.contentType
    const payload = drawn.body === undefined ? undefined : typeof drawn.body === 'string' ? drawn.body : JSON.stringify(drawn.body)
    const search = query.toString()
    return { method: route.method, url: search === '' ? url : `${url}?${search}`, headers, ...(payload === undefined ? {} : { payload }), payloadAsStream: true }
  })
}

/** The documented response for `status`: its exact entry, or the `4XX`/`5XX` range. */
function documented(route: Route, status: number): { content?: Record<string, { schema: object }> } | undefined {
  return route.operation.responses[String(status)] ?? route.operation.responses[`${String(status)[0]}XX`]
}

async function readBody(stream: NodeJS.ReadableStream & { destroy(): void }, contentType: string): Promise<string> {
  // An event stream never ends: its headers are what the fuzz checks.
  if (contentType.startsWith('text/event-stream')) {
    stream.destroy()
    return ''
  }
  let text = ''
  for await (const chunk of stream) text += String(chunk)
  return text
}

describe('fuzz of every route from the OpenAPI document', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let routes: Route[]
  const ajv = new Ajv({ strict: false })
  const validators = new Map<object, ValidateFunction>()
  const validate = (schema: object): ValidateFunction => {
    const known = validators.get(schema)
    if (known !== undefined) return known
    const compiled = ajv.compile(schema)
    validators.set(schema, compiled)
    return compiled
  }

  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.otherwise(plausibleRestate)
    app = await testGateway({
      restateIngressUrl: restate.url,
      restateAdminUrl: `${restate.url}/admin`,
      limits: { requestsPerSecond: 1_000_000, requestBurst: 1_000_000, maxConcurrentRuns: 1_000_000, maxEventStreams: 1_000_000 },
    })
    routes = routesOf(app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it('covers every documented route', () => {
    expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      'DELETE /v1/sessions/{sessionId}',
      'GET /healthz',
      'GET /readyz',
      'GET /v1/ag-ui/capabilities',
      'GET /v1/sessions',
      'GET /v1/sessions/{sessionId}',
      'GET /v1/sessions/{sessionId}/chat/stream',
      'GET /v1/sessions/{sessionId}/events',
      'POST /v1/ag-ui',
      'POST /v1/awakeables/{id}/resolve',
      'POST /v1/sessions/{sessionId}/cancel',
      'POST /v1/sessions/{sessionId}/chat',
      'POST /v1/sessions/{sessionId}/messages',
      'POST /v1/sessions/{sessionId}/prompts',
    ])
  })

  it('answers no 5xx, only documented statuses, and bodies that match the documented schemas', async () => {
    // Counterexamples name the route and show the request only (not the whole operation).
    const request = fc.constantFrom(...routes.keys()).chain((index) => requestFor(routes[index] as Route).map((options) => ({ index, options })))
    const seen = new Set<string>()
    let runs = 0
    await fc.assert(
      fc.asyncProperty(request, async ({ index, options }) => {
        const route = routes[index] as Route
        runs++
        const response = await app.inject(options)
        const contentType = String(response.headers['content-type'] ?? '')
        const text = await readBody(response.stream(), contentType)
        const where = `${options.method ?? ''} ${options.url ?? ''} → ${response.statusCode} ${text.slice(0, 300)}`
        seen.add(`${route.method} ${route.path} ${response.statusCode}`)
        expect(response.statusCode, where).toBeLessThan(500)
        const entry = documented(route, response.statusCode)
        expect(entry, where).toBeDefined()
        if (contentType.startsWith('text/event-stream')) return
        const body: unknown = JSON.parse(text)
        const schema = entry?.content?.['application/json']?.schema
        if (schema !== undefined) expect(validate(schema)(body), `${where} ${JSON.stringify(validate(schema).errors)}`).toBe(true)
        if (response.statusCode >= 400) {
          const { code } = (body as { error: { code: keyof typeof GATEWAY_ERROR_CODES } }).error
          expect(GATEWAY_ERROR_CODES[code]?.status, where).toBe(response.statusCode)
        }
      }),
      { numRuns: 2_000, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false },
    )
    // A loaded machine gets through fewer requests in the time limit: a route the fuzz did not yet take past validation
    // gets more draws of its own (still checked for 5xx).
    const reachedPastValidation = (route: Route): boolean => [...seen].some((entry) => entry.startsWith(`${route.method} ${route.path} 2`))
    for (const route of routes.filter((each) => !reachedPastValidation(each))) {
      for (const options of fc.sample(requestFor(route), 300)) {
        const response = await app.inject(options)
        await readBody(response.stream(), String(response.headers['content-type'] ?? ''))
        expect(response.statusCode, `${options.method ?? ''} ${options.url ?? ''}`).toBeLessThan(500)
        seen.add(`${route.method} ${route.path} ${response.statusCode}`)
        if (reachedPastValidation(route)) break
      }
    }
    console.log(`fuzz: ${runs} requests, ${seen.size} route/status pairs: ${[...seen].sort().join(', ')}`)
    // The fuzz reached past validation on every route (not only 400s).
    for (const route of routes) expect(reachedPastValidation(route), `${route.method} ${route.path}`).toBe(true)
  }, 60_000)
})
