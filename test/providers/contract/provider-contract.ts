import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AgentAbortedError, ProviderError } from '../../../src/errors'
import type { Message, ModelDelta, ModelRequest, Provider } from '../../../src/providers'
import { textOf } from '../../../src/providers'

/** A neutral answer every wire server can be scripted with. */
export interface NeutralAnswer {
  text?: string
  toolCalls?: { id: string; name: string; input: Record<string, string | number> }[]
  usage: { input: number; output: number }
}

/** One provider behind its wire server, driven by the shared suite. */
export interface ContractHarness {
  start(): Promise<void>
  close(): Promise<void>
  provider(): Provider
  /** USD per million input and output tokens of the provider's model (as configured in `provider()`). */
  prices: { input: number; output: number }
  answer(answer: NeutralAnswer): void
  httpError(status: number): void
  /** Streams some text, then the connection breaks. */
  cut(): void
  /** Streams some text, then nothing until the client gives up. */
  stall(): void
  /** The problems the server's API would find in each request received so far (empty lists when valid). */
  requestProblems(): string[][]
}

const tools = [{ name: 'read_file', description: 'Reads a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }]

function request(messages: Message[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system: 'Be brief.', messages, tools, signal: new AbortController().signal, ...overrides }
}

const userTurn = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

/** A history another provider wrote: signed thinking, redacted thinking, unsigned reasoning, two calls and their results. */
export const mixedHistory: Message[] = [
  userTurn('list then read'),
  { role: 'assistant', content: [
    { type: 'thinking', thinking: 'I should look first.', signature: 'sig-abc' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: 'Looking.' },
    { type: 'tool_use', id: 'toolu_01A', name: 'read_file', input: { path: 'a.txt' } },
    { type: 'tool_use', id: 'call_xyz.2', name: 'read_file', input: { path: 'b.txt' } },
  ] },
  { role: 'user', content: [
    { type: 'tool_result', toolUseId: 'toolu_01A', content: 'alpha' },
    { type: 'tool_result', toolUseId: 'call_xyz.2', content: [{ type: 'text', text: 'no such file' }], isError: true },
  ] },
  { role: 'assistant', content: [{ type: 'thinking', thinking: 'unsigned reasoning of another model' }, { type: 'text', text: 'Read both.' }] },
  userTurn('and now?'),
]

async function collect(provider: Provider, modelRequest: ModelRequest): Promise<{ deltas: ModelDelta[]; response: Awaited<ReturnType<Provider['stream']>> }> {
  const deltas: ModelDelta[] = []
  const response = await provider.stream(modelRequest, delta => deltas.push(delta))
  return { deltas, response }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try { await promise } catch (error) { return error }
  throw new Error('expected a rejection')
}

/**
 * The provider contract: what the agent loop relies on from every provider, whatever its wire. Text streams as
 * deltas, tool calls arrive whole with parsed input, usage and cost are reported, a history written by any provider
 * is sent in a form the server accepts, and failures are typed `ProviderError`s that say whether to retry.
 */
export function providerContract(name: string, harness: ContractHarness): void {
  describe(`provider contract: ${name}`, () => {
    beforeEach(() => harness.start())
    afterEach(() => harness.close())

    it('streams text deltas that add up to the answer, with usage and cost', async () => {
      harness.answer({ text: 'The answer is forty-two, as always.', usage: { input: 1200, output: 300 } })
      const { deltas, response } = await collect(harness.provider(), request([userTurn('question')]))
      expect(deltas.filter(delta => delta.kind === 'text').map(delta => delta.delta).join('')).toBe('The answer is forty-two, as always.')
      expect(deltas.filter(delta => delta.kind === 'text').length).toBeGreaterThan(1)
      expect(textOf(response.content)).toBe('The answer is forty-two, as always.')
      expect(response.stopReason).toBe('end_turn')
      expect(response.usage).toMatchObject({ inputTokens: 1200, outputTokens: 300 })
      expect(response.costUsd).toBeCloseTo((1200 * harness.prices.input + 300 * harness.prices.output) / 1_000_000, 10)
      expect(harness.requestProblems()).toEqual([[]])
    })

    it('assembles tool calls whose input arrives in pieces', async () => {
      harness.answer({ text: 'Reading.', toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'src/a-rather-long-file-name.ts' } }, { id: 'call_2', name: 'read_file', input: { path: 'b.ts' } }], usage: { input: 10, output: 20 } })
      const { deltas, response } = await collect(harness.provider(), request([userTurn('read two files')]))
      expect(response.stopReason).toBe('tool_use')
      expect(response.content.filter(block => block.type === 'tool_use')).toEqual([
        { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'src/a-rather-long-file-name.ts' } },
        { type: 'tool_use', id: 'call_2', name: 'read_file', input: { path: 'b.ts' } },
      ])
      expect(deltas.filter(delta => delta.kind === 'tool_input').length).toBeGreaterThan(2)
    })

    it('sends a history written by any provider in a form its API accepts', async () => {
      harness.answer({ text: 'ok', usage: { input: 1, output: 1 } })
      const { response } = await collect(harness.provider(), request(mixedHistory))
      expect(textOf(response.content)).toBe('ok')
      expect(harness.requestProblems()).toEqual([[]])
    })

    it('maps a 429 to a retryable and a 400 to a terminal ProviderError', async () => {
      harness.httpError(429)
      expect(await rejection(harness.provider().stream(request([userTurn('x')]), () => {}))).toMatchObject({ code: 'provider_rate_limited', retryable: true, status: 429 })
      harness.httpError(400)
      const error = await rejection(harness.provider().stream(request([userTurn('x')]), () => {}))
      expect(error).toBeInstanceOf(ProviderError)
      expect(error).toMatchObject({ code: 'provider_bad_request', retryable: false, status: 400 })
      harness.httpError(503)
      expect(await rejection(harness.provider().stream(request([userTurn('x')]), () => {}))).toMatchObject({ retryable: true, status: 503 })
    })

    it('reports a stream cut mid-answer as a retryable ProviderError', async () => {
      harness.cut()
      const error = await rejection(harness.provider().stream(request([userTurn('x')]), () => {}))
      expect(error).toBeInstanceOf(ProviderError)
      expect(error).toMatchObject({ retryable: true })
    })

    it('stops at once when the request is aborted mid-stream', async () => {
      harness.stall()
      const controller = new AbortController()
      const streaming = harness.provider().stream(request([userTurn('x')], { signal: controller.signal }), () => controller.abort())
      const timer = setTimeout(() => controller.abort(), 300)
      const error = await rejection(streaming)
      clearTimeout(timer)
      expect(error).toBeInstanceOf(AgentAbortedError)
    })
  })
}
