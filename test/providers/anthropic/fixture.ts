import { afterEach, beforeEach } from 'vitest'
import { anthropic } from '../../../src/providers/anthropic'
import type { AnthropicOptions } from '../../../src/providers/anthropic'
import type { Message, ModelDelta, ModelRequest, ModelResponse, Provider } from '../../../src/providers'
import { start } from '../../../support/anthropic-server'
import type { FakeAnthropicServer, FakeServerOptions } from '../../../support/anthropic-server'

/** The key every test server expects. */
export const testApiKey = 'sk-ant-test-key'

/** A neutral model id: deprecated ids make the SDK warn on every request. */
export const testModel = 'claude-test'

/** Prices for {@link testModel}: round numbers so expected costs are easy to read. */
export const testPrices = { [testModel]: { inputPerMTok: 1, outputPerMTok: 10, cacheWrite5mPerMTok: 2, cacheWrite1hPerMTok: 4, cacheReadPerMTok: 0.5 } }

/** A test's server and a way to build providers pointed at it. */
export interface Fixture {
  server: FakeAnthropicServer
  provider(options?: AnthropicOptions): Provider
}

/** Starts a fake server before each test and closes it after; read `fixture.server` inside tests. */
export function useFakeServer(serverOptions: FakeServerOptions = { apiKey: testApiKey }): Fixture {
  const fixture = {} as Fixture
  beforeEach(async () => {
    fixture.server = await start(serverOptions)
    fixture.provider = options => anthropic({ apiKey: testApiKey, baseURL: fixture.server.url, model: testModel, prices: testPrices, maxRetries: 0, ...options })
  })
  afterEach(async () => {
    await fixture.server.close()
  })
  return fixture
}

/** A request with one user text message and defaults for everything else. */
export function userRequest(text: string, overrides: Partial<ModelRequest> = {}): ModelRequest {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text }] }]
  return { messages, tools: [], signal: new AbortController().signal, ...overrides }
}

/** Streams `request` and returns the response with every delta reported. */
export async function streamAll(provider: Provider, request: ModelRequest): Promise<{ response: ModelResponse; deltas: ModelDelta[] }> {
  const deltas: ModelDelta[] = []
  const response = await provider.stream(request, delta => deltas.push(delta))
  return { response, deltas }
}

/** Awaits a promise expected to reject and returns the rejection. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the promise to reject')
}
