import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { aiSdkModel, anthropic, openaiCompatible } from '../../../src/providers'
import type { Provider } from '../../../src/providers'
import { start, validateMessagesRequest } from '../../../support/anthropic-server'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { startOpenAiServer } from '../../../support/openai-server'
import type { FakeOpenAiServer } from '../../../support/openai-server'
import type { ContractHarness, NeutralAnswer } from './provider-contract'

const prices = { input: 2, output: 8 }

/** The Anthropic provider against the fake Messages API. */
export function anthropicHarness(): ContractHarness {
  let server: FakeAnthropicServer
  return {
    prices,
    start: async () => { server = await start({ apiKey: 'sk-ant-contract' }) },
    close: () => server.close(),
    provider: (): Provider => anthropic({ apiKey: 'sk-ant-contract', baseURL: server.url, model: 'claude-contract', maxRetries: 0, idleTimeoutMs: 5_000, prices: { 'claude-contract': { inputPerMTok: prices.input, outputPerMTok: prices.output, cacheWrite5mPerMTok: 0, cacheWrite1hPerMTok: 0, cacheReadPerMTok: 0 } } }),
    answer: (answer: NeutralAnswer) => server.enqueue({
      kind: 'message',
      content: [...(answer.text ? [{ type: 'text' as const, text: answer.text }] : []), ...(answer.toolCalls ?? []).map(call => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.input }))],
      usage: { input_tokens: answer.usage.input, output_tokens: answer.usage.output },
    }),
    httpError: status => server.enqueue({ kind: 'error', status }),
    cut: () => server.enqueue({ kind: 'cut', afterEvents: 3 }),
    stall: () => server.enqueue({ kind: 'stall', afterEvents: 3 }),
    requestProblems: () => server.requests.map(request => validateMessagesRequest(request.body)),
  }
}

const gptPrices = { 'gpt-contract': { inputPerMTok: prices.input, outputPerMTok: prices.output } }

/** Our OpenAI-compatible provider pointed at `server`. */
function ownOpenAiProvider(server: FakeOpenAiServer): Provider {
  return openaiCompatible({ name: 'openai', apiKey: 'sk-oai-contract', baseURL: server.baseURL, model: 'gpt-contract', maxRetries: 0, idleTimeoutMs: 5_000, prices: gptPrices })
}

/** The AI SDK adapter over `@ai-sdk/openai-compatible`'s chat model (a real `LanguageModelV4`) pointed at `server`. */
export function aiSdkOpenAiProvider(server: FakeOpenAiServer): Provider {
  const models = createOpenAICompatible({ name: 'compat', baseURL: server.baseURL, apiKey: 'sk-oai-contract', includeUsage: true })
  return aiSdkModel(models.chatModel('gpt-contract'), { name: 'compat', prices: gptPrices })
}

/** A provider on the Chat Completions wire (ours by default) against the fake Chat Completions API. */
export function openAiHarness(makeProvider: (server: FakeOpenAiServer) => Provider = ownOpenAiProvider): ContractHarness {
  let server: FakeOpenAiServer
  return {
    prices,
    start: async () => { server = await startOpenAiServer({ apiKey: 'sk-oai-contract' }) },
    close: () => server.close(),
    provider: (): Provider => makeProvider(server),
    answer: (answer: NeutralAnswer) => server.enqueue({
      kind: 'chat',
      ...(answer.text ? { text: answer.text } : {}),
      toolCalls: (answer.toolCalls ?? []).map(call => ({ id: call.id, name: call.name, arguments: call.input })),
      usage: { prompt_tokens: answer.usage.input, completion_tokens: answer.usage.output },
    }),
    httpError: status => server.enqueue({ kind: 'error', status }),
    cut: () => server.enqueue({ kind: 'cut', afterChunks: 3 }),
    stall: () => server.enqueue({ kind: 'stall', afterChunks: 3 }),
    requestProblems: () => server.requests.map(request => request.problems),
  }
}

