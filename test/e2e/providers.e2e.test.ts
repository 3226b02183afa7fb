import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start, validateMessagesRequest } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedResponse } from '../../support/anthropic-server'
import { startOpenAiServer } from '../../support/openai-server'
import type { FakeOpenAiServer, JsonObject, RecordedChatRequest, ScriptedChatResponse } from '../../support/openai-server'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const ANTHROPIC_KEY = 'sk-ant-providers-e2e'
const OPENAI_KEY = 'sk-oai-providers-e2e'
/** Round prices so the ledger's cost is easy to check: USD per million tokens. */
const GPT_PRICES = { inputPerMTok: 1000, outputPerMTok: 2000 }

interface ChatMessage { role: string; content?: unknown; tool_calls?: unknown[] }
interface AnthropicMessage { role: string; content: string | Array<{ type: string; text?: string }> }

const chatMessages = (request: RecordedChatRequest): ChatMessage[] => (request.body?.['messages'] ?? []) as unknown as ChatMessage[]
const anthropicMessages = (request: RecordedRequest): AnthropicMessage[] => (request.body?.messages ?? []) as unknown as AnthropicMessage[]

/** The latest user text of a Chat Completions request (the run's prompt), and whether a tool result came after it. */
function chatStage(request: RecordedChatRequest): { prompt: string; afterTool: boolean } {
  const messages = chatMessages(request)
  const prompt = [...messages].reverse().find(message => message.role === 'user' && typeof message.content === 'string')
  return { prompt: String(prompt?.content ?? ''), afterTool: messages.at(-1)?.role === 'tool' }
}

function anthropicStage(request: RecordedRequest): { prompt: string; afterTool: boolean } {
  const messages = anthropicMessages(request)
  const texts = messages.filter(message => message.role === 'user').map(message => typeof message.content === 'string' ? message.content : message.content.filter(block => block.type === 'text').map(block => block.text ?? '').join(''))
  const last = messages.at(-1)
  return { prompt: texts.filter(Boolean).at(-1) ?? '', afterTool: typeof last?.content !== 'string' && (last?.content.some(block => block.type === 'tool_result') ?? false) }
}

function lastToolResultText(request: RecordedRequest): string {
  const last = anthropicMessages(request).at(-1)
  const result = typeof last?.content === 'string' ? undefined : (last?.content as Array<{ type: string; content?: unknown }> | undefined)?.find(block => block.type === 'tool_result')
  return typeof result?.content === 'string' ? result.content : JSON.stringify(result?.content)
}

function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

describe('providers on the real stack: OpenAI-compatible and Anthropic side by side', { timeout: 300_000 }, () => {
  let stack: TestStack | undefined
  let anthropicServer: FakeAnthropicServer | undefined
  let openAiServer: FakeOpenAiServer | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const a = (): FakeAnthropicServer => { if (!anthropicServer) throw new Error('no server'); return anthropicServer }
  const o = (): FakeOpenAiServer => { if (!openAiServer) throw new Error('no server'); return openAiServer }
  printStackOutputOnFailure(() => stack)
  /** The usage of every Chat Completions stream that reached its usage chunk, i.e. what the server billed. */
  const billed = { prompt: 0, completion: 0 }
  let crashTurnOneServed = 0

  beforeAll(async () => {
    openAiServer = await startOpenAiServer({
      apiKey: OPENAI_KEY,
      onChunkSent: (chunk: JsonObject) => {
        const usage = chunk['usage'] as { prompt_tokens: number; completion_tokens: number } | undefined
        if (usage) { billed.prompt += usage.prompt_tokens; billed.completion += usage.completion_tokens }
      },
    })
    o().setHandler((request): ScriptedChatResponse => {
      const { prompt, afterTool } = chatStage(request)
      if (prompt === 'crash-openai') {
        if (!afterTool) return { kind: 'chat', text: 'Listing.', toolCalls: [{ name: 'list_files', arguments: { path: '.' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }
        crashTurnOneServed += 1
        // The first answer to turn 1 streams slowly, so the services die in the middle of it.
        return { kind: 'chat', text: 'The workspace is listed and all is well.', textChunkChars: 3, usage: { prompt_tokens: 50, completion_tokens: 5 }, ...(crashTurnOneServed === 1 ? { chunkIntervalMs: 400 } : {}) }
      }
      if (prompt.startsWith('child-task')) return { kind: 'chat', text: `openai child did ${prompt}` }
      if (afterTool) return { kind: 'chat', reasoning: `reasoning of ${prompt}`, text: `openai done ${prompt}` }
      return { kind: 'chat', reasoning: 'I will list.', toolCalls: [{ id: `call.${prompt}`, name: 'list_files', arguments: { path: '.' } }] }
    })
    anthropicServer = await start({ apiKey: ANTHROPIC_KEY })
    a().setHandler((request): ScriptedResponse => {
      const { prompt, afterTool } = anthropicStage(request)
      if (prompt.startsWith('spawn-with ')) {
        const model = prompt.slice('spawn-with '.length)
        return afterTool ? { kind: 'message', content: [{ type: 'text', text: `parent saw: ${lastToolResultText(request)}` }] } : { kind: 'message', content: [{ type: 'tool_use', name: 'spawn', input: { task: `child-task for ${model}`, model } }] }
      }
      if (afterTool) return { kind: 'message', content: [{ type: 'thinking', thinking: `thought on ${prompt}`, signature: `sig-${prompt}` }, { type: 'text', text: `anthropic done ${prompt}` }] }
      return { kind: 'message', content: [{ type: 'thinking', thinking: 'list first', signature: 'sig-list' }, { type: 'tool_use', name: 'list_files', input: { path: '.' } }] }
    })
    stack = await startTestStack({
      ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: a().url, ZIDANE_MODEL: 'claude-test', ZIDANE_SANDBOX: 'off',
      ZIDANE_PROVIDERS: JSON.stringify({ openai: { type: 'openai-compatible', baseURL: o().baseURL, models: ['gpt-e2e'], prices: { 'gpt-e2e': GPT_PRICES } } }),
      ZIDANE_OPENAI_API_KEY: OPENAI_KEY,
    }, { tenants: 1 })
  }, 180_000)
  afterAll(async () => {
    await stack?.destroy()
    await anthropicServer?.close()
    await openAiServer?.close()
  })

  const status = async (sessionId: string): Promise<string | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as { status: string }).status : undefined
  }

  it('a SIGKILL of the services mid-stream: the finished step is requested once, the ledger equals the server\'s billed usage', async () => {
    const accepted = await s().request('/v1/sessions/oai-crash/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'crash-openai', model: 'openai:gpt-e2e' }) })
    expect(accepted.status).toBe(202)
    await waitFor(() => (crashTurnOneServed === 1 ? true : undefined))
    await new Promise(resolve => setTimeout(resolve, 1_000))
    s().services().current()?.kill('SIGKILL')
    await waitFor(async () => ((await status('oai-crash')) === 'completed' ? true : undefined))
    const stages = o().requests.filter(request => chatStage(request).prompt === 'crash-openai').map(request => chatStage(request).afterTool)
    expect(stages.filter(afterTool => !afterTool)).toHaveLength(1)
    expect(stages.filter(afterTool => afterTool)).toHaveLength(2)
    const view = (await (await s().request('/v1/sessions/oai-crash')).json()) as { usage: { usage: { inputTokens: number; outputTokens: number }; costUsd: number; modelRequests: number } }
    expect(billed).toEqual({ prompt: 90, completion: 13 })
    expect(view.usage.usage).toMatchObject({ inputTokens: billed.prompt, outputTokens: billed.completion })
    expect(view.usage.costUsd).toBeCloseTo((billed.prompt * GPT_PRICES.inputPerMTok + billed.completion * GPT_PRICES.outputPerMTok) / 1e6, 9)
    expect(view.usage.modelRequests).toBe(2)
    expect(o().requests.every(request => request.headers.authorization === `Bearer ${OPENAI_KEY}`)).toBe(true)
  })

  it('one session alternates Anthropic and OpenAI-compatible models over 10 runs with tool calls; every request is valid for its API', async () => {
    const anthropicBefore = a().requests.length
    const openAiBefore = o().requests.length
    for (let run = 0; run < 10; run++) {
      const model = run % 2 === 0 ? 'anthropic:claude-test' : 'openai:gpt-e2e'
      const response = await s().request('/v1/sessions/alternating/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: `run-${run}`, model }) })
      const result = (await response.json()) as { status: string; text: string }
      expect(result, `run ${run}`).toMatchObject({ status: 'completed', text: `${run % 2 === 0 ? 'anthropic' : 'openai'} done run-${run}` })
    }
    const anthropicRequests = a().requests.slice(anthropicBefore)
    const openAiRequests = o().requests.slice(openAiBefore)
    expect(anthropicRequests).toHaveLength(10)
    expect(openAiRequests).toHaveLength(10)
    expect(anthropicRequests.map(request => validateMessagesRequest(request.body))).toEqual(anthropicRequests.map(() => []))
    expect(openAiRequests.map(request => request.problems)).toEqual(openAiRequests.map(() => []))
    // The last OpenAI request carries the whole history: Anthropic's calls and results as tool_calls and tool messages, no thinking.
    const last = chatMessages(openAiRequests.at(-1) as RecordedChatRequest)
    expect(last.filter(message => message.role === 'tool')).toHaveLength(10)
    expect(JSON.stringify(last)).not.toContain('sig-')
    const lastAnthropic = JSON.stringify(anthropicRequests.at(-1)?.body?.messages)
    expect(lastAnthropic).toContain('call_run-7')
    expect(lastAnthropic).not.toContain('reasoning of run-')
  })

  it('a sub-agent runs on the model its spawn call names; an unknown one is an error result naming the known models', async () => {
    const routed = await s().request('/v1/sessions/spawn-openai/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'spawn-with openai:gpt-e2e' }) })
    expect(await routed.json()).toMatchObject({ status: 'completed', text: 'parent saw: openai child did child-task for openai:gpt-e2e' })
    expect(o().requests.filter(request => chatStage(request).prompt === 'child-task for openai:gpt-e2e').map(request => request.body?.['model'])).toEqual(['gpt-e2e'])
    const refused = await s().request('/v1/sessions/spawn-unknown/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'spawn-with mistral:large' }) })
    const result = (await refused.json()) as { status: string; text: string }
    expect(result.status).toBe('completed')
    expect(result.text).toMatch(/provider_unknown_model.*unknown provider \W*mistral/)
    expect(result.text).toContain('openai:gpt-e2e')
  })

  it('the providers\' keys appear nowhere: journal, state, events, logs', async () => {
    const query = async (sql: string): Promise<number> => {
      const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
      const rows = ((await response.json()) as { rows: Array<{ n: number }> }).rows
      return Number(rows[0]?.n ?? -1)
    }
    // The queries see what the runs wrote (finished invocations' journals may be gone; the session state stays).
    expect(await query(`SELECT COUNT(*) AS n FROM state WHERE value_utf8 LIKE '%openai done run-%'`)).toBeGreaterThan(0)
    const events = await readEvents('alternating')
    expect(events).toContain('list_files')
    for (const key of [OPENAI_KEY, ANTHROPIC_KEY]) {
      expect(await query(`SELECT COUNT(*) AS n FROM sys_journal WHERE entry_json LIKE '%${key}%'`)).toBe(0)
      expect(await query(`SELECT COUNT(*) AS n FROM state WHERE value_utf8 LIKE '%${key}%'`)).toBe(0)
      expect(events).not.toContain(key)
      expect(s().output()).not.toContain(key)
    }
  })

  /** The session's event log as the gateway streams it, read for a moment. */
  async function readEvents(session: string): Promise<string> {
    const response = await s().request(`/v1/sessions/${session}/events?after=0`, { signal: AbortSignal.timeout(3000) })
    let text = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8')
    } catch {
      // The timeout ends the stream; what arrived is enough.
    }
    return text
  }

  it('a prompt naming an unknown model is 400 naming the known ones', async () => {
    const response = await s().request('/v1/sessions/unknown-model/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'hi', model: 'gpt-4o' }) })
    expect(response.status).toBe(400)
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('unknown_model')
    expect(error.message).toContain('openai:gpt-e2e')
    expect(error.message).toContain('anthropic:claude-test')
  })
})
