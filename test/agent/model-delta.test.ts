import { describe, expect, it } from 'vitest'
import { createAgent, modelDeltaEvent } from 'zidane'
import type { AttemptDelta } from 'zidane'
import type { ModelResponse, Provider } from 'zidane/providers'
import { ProviderError } from '../../src/errors/zidane-error'
import { emptyUsage } from '../../src/providers/content'

const answer: ModelResponse = {
  content: [{ type: 'thinking', thinking: 'let me see', signature: 'sig' }, { type: 'text', text: 'Hello ' }, { type: 'text', text: 'world' }],
  stopReason: 'end_turn',
  usage: emptyUsage(),
  costUsd: 0,
  model: 'm',
}

/** Streams half an answer and fails with a retryable overload on its first request, then streams the whole answer. */
function overloadedOnce(): Provider {
  let requests = 0
  return {
    name: 'flaky',
    model: 'm',
    async stream(_request, onDelta) {
      requests += 1
      onDelta({ kind: 'thinking', index: 0, delta: 'let ' })
      onDelta({ kind: 'text', index: 1, delta: 'Hel' })
      if (requests === 1) throw new ProviderError('Overloaded', { code: 'provider_overloaded', retryable: true, status: 529 })
      onDelta({ kind: 'thinking', index: 0, delta: 'me see' })
      onDelta({ kind: 'text', index: 1, delta: 'lo ' })
      onDelta({ kind: 'text', index: 2, delta: 'world' })
      return structuredClone(answer)
    },
  }
}

async function deltasOf(provider: Provider): Promise<Array<{ runId: string; turn: number; delta: AttemptDelta }>> {
  const deltas: Array<{ runId: string; turn: number; delta: AttemptDelta }> = []
  const agent = createAgent({ provider, behavior: { modelRetryDelayMs: 1 }, hooks: { 'model:delta': event => { deltas.push(event) } } })
  const stats = await agent.run({ prompt: 'hi' })
  expect(stats.status).toBe('completed')
  await new Promise(resolve => setImmediate(resolve))
  return deltas
}

describe('model:delta', () => {
  it('gives a retried request a new attempt id and starts its offsets again at 0', async () => {
    const deltas = await deltasOf(overloadedOnce())
    const attempts = [...new Set(deltas.map(event => event.delta.attempt))]
    expect(attempts).toHaveLength(2)
    const second = deltas.filter(event => event.delta.attempt === attempts[1])
    expect(second.map(event => [event.delta.kind, event.delta.offset, event.delta.delta])).toEqual([
      ['thinking', 0, 'let '], ['text', 0, 'Hel'], ['thinking', 4, 'me see'], ['text', 3, 'lo '], ['text', 6, 'world'],
    ])
    expect(deltas.every(event => event.turn === 1 && event.runId === deltas[0]?.runId)).toBe(true)
  })

  it('numbers attempts uniquely across runs and agents of one process', async () => {
    const first = await deltasOf(overloadedOnce())
    const second = await deltasOf(overloadedOnce())
    const ids = new Set([...first, ...second].map(event => event.delta.attempt))
    expect(ids.size).toBe(4)
  })

  it('streams the text of a turn so that the deltas of its last attempt concatenate to the journaled text', async () => {
    const deltas = await deltasOf(overloadedOnce())
    const last = deltas.filter(event => event.delta.attempt === deltas.at(-1)?.delta.attempt && event.delta.kind === 'text')
    expect(last.map(event => event.delta.delta).join('')).toBe('Hello world')
  })

  it('becomes one model:delta event shape (SSE, --stream-json, the live hub) with the label of a sub-agent, and none for tool input', () => {
    const delta: AttemptDelta = { kind: 'text', index: 1, delta: 'Hi', attempt: 'n-1', offset: 4 }
    expect(modelDeltaEvent({ runId: 'r', turn: 2, delta })).toEqual({ type: 'model:delta', data: { runId: 'r', turn: 2, attempt: 'n-1', kind: 'text', offset: 4, text: 'Hi' } })
    expect(modelDeltaEvent({ runId: 'r', turn: 2, delta }, 'child-1')?.data.label).toBe('child-1')
    expect(modelDeltaEvent({ runId: 'r', turn: 2, delta: { ...delta, kind: 'tool_input' } })).toBeUndefined()
  })
})
