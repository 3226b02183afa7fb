import { describe, expect, it } from 'vitest'
import { ProviderError } from '../../../src/errors'
import { start } from '../../../support/anthropic-server'
import { rejectionOf, useFakeServer, userRequest } from './fixture'

describe('anthropic provider: errors and retries', () => {
  const fixture = useFakeServer()

  it('lets the SDK retry a 429 with retry-after-ms, then succeeds', async () => {
    fixture.server.enqueue(
      { kind: 'error', status: 429, retryAfterMs: 5 },
      { kind: 'error', status: 429, retryAfterMs: 5 },
      { kind: 'message', content: [{ type: 'text', text: 'finally' }] },
    )
    const response = await fixture.provider({ maxRetries: 2 }).stream(userRequest('hi'), () => {})
    expect(response.content).toEqual([{ type: 'text', text: 'finally' }])
    expect(fixture.server.requests.map(request => request.retryCount)).toEqual([0, 1, 2])
    expect(fixture.server.requests[2]?.rawBody).toBe(fixture.server.requests[0]?.rawBody)
  })

  it('maps a 429 that outlasts the SDK retries to a retryable provider_rate_limited', async () => {
    fixture.server.enqueue({ kind: 'error', status: 429, retryAfterMs: 1 }, { kind: 'error', status: 429, retryAfterMs: 1 })
    const error = await rejectionOf(fixture.provider({ maxRetries: 1 }).stream(userRequest('hi'), () => {}))
    expect(error).toBeInstanceOf(ProviderError)
    expect(error).toMatchObject({ code: 'provider_rate_limited', retryable: true, status: 429, requestId: 'req_fake_000002' })
    expect(fixture.server.requests).toHaveLength(2)
  })

  it('lets the SDK retry a 529 and maps a final one to provider_overloaded', async () => {
    fixture.server.enqueue({ kind: 'overloaded', retryAfterMs: 1 }, { kind: 'overloaded', retryAfterMs: 1 })
    const error = await rejectionOf(fixture.provider({ maxRetries: 1 }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_overloaded', retryable: true, status: 529 })
    expect(fixture.server.requests.map(request => request.retryCount)).toEqual([0, 1])
  })

  it('does not retry a 400 and maps it to provider_bad_request with status and request id', async () => {
    fixture.server.enqueue({ kind: 'error', status: 400, message: 'messages: roles must alternate' })
    const error = await rejectionOf(fixture.provider({ maxRetries: 2 }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_bad_request', retryable: false, status: 400, requestId: 'req_fake_000001', category: 'provider' })
    expect((error as Error).message).toContain('messages: roles must alternate')
    expect(fixture.server.requests).toHaveLength(1)
  })

  it('maps a wrong key to a non-retryable provider_unauthorized', async () => {
    const error = await rejectionOf(fixture.provider({ apiKey: 'sk-wrong', maxRetries: 2 }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_unauthorized', retryable: false, status: 401 })
    expect(fixture.server.requests).toHaveLength(1)
  })

  it.each([
    [403, 'provider_forbidden', false],
    [404, 'provider_not_found', false],
    [413, 'provider_request_too_large', false],
    [500, 'provider_internal_error', true],
    [502, 'provider_bad_gateway', true],
    [503, 'provider_unavailable', true],
    [504, 'provider_gateway_timeout', true],
  ])('maps HTTP %i to %s (retryable: %s)', async (status, code, retryable) => {
    fixture.server.enqueue({ kind: 'error', status })
    const error = await rejectionOf(fixture.provider().stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code, retryable, status })
  })

  it('honours x-should-retry: false from the server', async () => {
    fixture.server.enqueue({ kind: 'error', status: 503, shouldRetry: false })
    const error = await rejectionOf(fixture.provider({ maxRetries: 2 }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_unavailable', retryable: false })
    expect(fixture.server.requests).toHaveLength(1)
  })

  it('aborts a stalled stream after idleTimeoutMs with a retryable provider_stream_idle', async () => {
    fixture.server.enqueue({ kind: 'stall', afterEvents: 4 })
    const startedMs = Date.now()
    const error = await rejectionOf(fixture.provider({ idleTimeoutMs: 150 }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_stream_idle', retryable: true, requestId: 'req_fake_000001' })
    expect(Date.now() - startedMs).toBeLessThan(2_000)
  })

  it('counts pings as activity', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], pingForMs: 600 })
    const response = await fixture.provider({ idleTimeoutMs: 200 }).stream(userRequest('hi'), () => {})
    expect(response.content).toHaveLength(2)
  })

  it('turns a mid-stream overloaded_error event into a retryable provider_overloaded', async () => {
    fixture.server.enqueue({ kind: 'overloaded', midStream: true, afterEvents: 4 })
    const deltas: string[] = []
    const error = await rejectionOf(fixture.provider({ maxRetries: 2 }).stream(userRequest('hi'), delta => deltas.push(delta.delta)))
    expect(error).toMatchObject({ code: 'provider_overloaded', retryable: true, requestId: 'req_fake_000001' })
    expect((error as ProviderError).status).toBeUndefined()
    expect(deltas).toHaveLength(1)
    expect(fixture.server.requests).toHaveLength(1)
  })

  it('turns any other mid-stream error event into a retryable provider_stream_error', async () => {
    fixture.server.enqueue({ kind: 'stream_error', afterEvents: 2, errorType: 'api_error' })
    const error = await rejectionOf(fixture.provider().stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_stream_error', retryable: true })
  })

  it('turns a connection cut mid-event into a retryable provider_connection_lost', async () => {
    fixture.server.enqueue({ kind: 'cut', afterEvents: 5 })
    const error = await rejectionOf(fixture.provider().stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_connection_lost', retryable: true, requestId: 'req_fake_000001' })
  })

  it('treats a stream that ends without message_stop as incomplete and retryable', async () => {
    fixture.server.enqueue({ kind: 'early_end', afterEvents: 6 })
    const error = await rejectionOf(fixture.provider().stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_stream_incomplete', retryable: true })
  })

  it('maps a refused connection to a retryable provider_connection_failed', async () => {
    const url = fixture.server.url
    await fixture.server.close()
    const error = await rejectionOf(fixture.provider({ baseURL: url }).stream(userRequest('hi'), () => {}))
    expect(error).toMatchObject({ code: 'provider_connection_failed', retryable: true })
    fixture.server = await start()
  })
})

describe('anthropic error codes', () => {
  it('are all documented in the provider README', async () => {
    const { readFile, readdir } = await import('node:fs/promises')
    const folder = new URL('../../../src/providers/anthropic/', import.meta.url)
    const readme = await readFile(new URL('README.md', folder), 'utf8')
    const sources = await Promise.all((await readdir(folder)).filter(name => name.endsWith('.ts')).map(name => readFile(new URL(name, folder), 'utf8')))
    const codes = new Set(sources.flatMap(source => Array.from(source.matchAll(/'(provider_[a-z_]+)'/g), match => match[1])))
    expect(codes.size).toBeGreaterThan(20)
    for (const code of codes) expect(readme).toContain(`\`${String(code)}\``)
  })
})
