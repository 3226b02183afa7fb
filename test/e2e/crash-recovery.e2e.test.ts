import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedResponse } from '../../support/anthropic-server'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const API_KEY = 'sk-ant-e2e'

interface WireMessage { role: string; content: string | Array<{ type: string; text?: string; content?: unknown }> }

function promptOf(request: RecordedRequest): string {
  const first = (request.body?.messages as unknown as WireMessage[] | undefined)?.[0]
  if (!first) return ''
  return typeof first.content === 'string' ? first.content : first.content.map(block => block.text ?? '').join('')
}

function turnOf(request: RecordedRequest): number {
  return ((request.body?.messages as unknown as WireMessage[] | undefined) ?? []).filter(message => message.role === 'assistant').length
}

function lastToolResult(request: RecordedRequest): unknown {
  const messages = (request.body?.messages as unknown as WireMessage[] | undefined) ?? []
  const last = messages.at(-1)
  return typeof last?.content === 'string' ? undefined : last?.content.find(block => block.type === 'tool_result')?.content
}

function text(value: string): ScriptedResponse {
  return { kind: 'message', content: [{ type: 'text', text: value }], usage: { input_tokens: 50, output_tokens: 5 } }
}

function toolCall(name: string, input: Record<string, string>): ScriptedResponse {
  return { kind: 'message', content: [{ type: 'tool_use', name, input }], usage: { input_tokens: 40, output_tokens: 8 } }
}

/** Polls `probe` (every 50 ms) until it yields a value; the harness's poller with this file's timeout. */
function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

describe('crashes of the services process', { timeout: 180_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  const m = (): FakeAnthropicServer => { if (!model) throw new Error('no model'); return model }
  let ledger = ''

  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    m().setHandler(async request => {
      const prompt = promptOf(request)
      const turn = turnOf(request)
      if (prompt === 'crash-in-tool') return turn === 0 ? toolCall('shell', { command: `echo ran >> ${ledger}; sleep 4` }) : text('tool crash survived')
      if (prompt === 'crash-in-model') {
        if (turn === 0) await new Promise(resolve => setTimeout(resolve, 1_500))
        return turn === 0 ? toolCall('shell', { command: 'echo model-crash-ok' }) : text('model crash survived')
      }
      if (prompt === 'ask-while-down') return turn === 0 ? toolCall('ask_user', { question: 'Which region?' }) : text(`noted: ${String(lastToolResult(request))}`)
      return text('ok')
    })
    // The unsafe tool's side effect goes to a ledger outside its workspace, which a sandboxed command cannot reach: one tenant, no sandbox.
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: m().url, ZIDANE_MODEL: 'claude-test', ZIDANE_SANDBOX: 'off' }, { tenants: 1 })
    ledger = join(s().sharedDir, 'side-effects.log')
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
  })

  const requestsFor = (prompt: string) => m().requests.filter(request => promptOf(request) === prompt)
  const status = async (sessionId: string): Promise<string | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as { status: string }).status : undefined
  }
  const killServices = (): void => { s().services().current()?.kill('SIGKILL') }

  it('5a. SIGKILL during an unsafe tool: the run completes, no finished model step is requested twice, the model sees the interrupted text', async () => {
    const accepted = await s().request('/v1/sessions/crash-tool/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'crash-in-tool' }) })
    expect(accepted.status).toBe(202)
    await waitFor(() => (existsSync(ledger) ? true : undefined))
    killServices()
    await waitFor(async () => ((await status('crash-tool')) === 'completed' ? true : undefined))
    const requests = requestsFor('crash-in-tool')
    expect(requests.map(turnOf)).toEqual([0, 1])
    expect(lastToolResult(requests[1] as RecordedRequest)).toBe(INTERRUPTED_TOOL_TEXT)
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toEqual(['ran'])
    const view = (await (await s().request('/v1/sessions/crash-tool')).json()) as { usage: { usage: { inputTokens: number; outputTokens: number } } }
    // The ledger counts each billed request once: 40+50 input and 8+5 output tokens, as the model server served them.
    expect(view.usage.usage).toMatchObject({ inputTokens: 90, outputTokens: 13 })
  })

  it('5b. SIGKILL during a model step: the cut-off request is made again, finished ones are not', async () => {
    await s().request('/v1/sessions/crash-model/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'crash-in-model' }) })
    await waitFor(() => (requestsFor('crash-in-model').length > 0 ? true : undefined))
    killServices()
    await waitFor(async () => ((await status('crash-model')) === 'completed' ? true : undefined))
    const turns = requestsFor('crash-in-model').map(turnOf)
    expect(turns.filter(turn => turn === 0)).toHaveLength(2)
    expect(turns.filter(turn => turn === 1)).toHaveLength(1)
  })

  it('2b. an answer given while the services process is stopped is kept, and the run completes when it is back', async () => {
    await s().request('/v1/sessions/ask-down/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'ask-while-down' }) })
    const pending = await waitFor(async () => {
      const response = await s().request('/v1/sessions/ask-down')
      if (response.status !== 200) return undefined
      return ((await response.json()) as { pending: Array<{ answerUrl: string }> }).pending[0]
    })
    await s().services().stop()
    const url = new URL(pending.answerUrl)
    const answered = await fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'eu-west' }) })
    expect(answered.status).toBe(202)
    s().services().restart()
    await waitFor(async () => ((await status('ask-down')) === 'completed' ? true : undefined))
    const final = requestsFor('ask-while-down').at(-1)
    expect(lastToolResult(final as RecordedRequest)).toBe('eu-west')
    expect(requestsFor('ask-while-down').map(turnOf)).toEqual([0, 1])
  })

  it('says so clearly when the Restate server itself dies', async () => {
    const restateProcess = s().processes.find(handle => handle.name === 'restate')
    restateProcess?.current()?.kill('SIGKILL')
    const reasons = await waitFor(() => (s().fatalReasons().length > 0 ? s().fatalReasons() : undefined), 10_000)
    expect(reasons[0]).toContain('restate exited')
  })
})
