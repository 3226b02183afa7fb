import { verifyEvents } from '@ag-ui/client'
import type { BaseEvent } from '@ag-ui/client'
import { EventSchemas } from '@ag-ui/core/schemas'
import { from, lastValueFrom, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { AgUiMapping, runStartedEvent, type AgUiEvent, type AgUiMappingOptions } from '../../../ingress-gateway/protocols/ag-ui-events'
import { answerOfResume } from '../../../ingress-gateway/protocols/ag-ui-interrupts'
import { snapshotMessages } from '../../../ingress-gateway/protocols/ag-ui-snapshot'
import type { TimelineItem } from '../../../ingress-gateway/protocols/timeline-items'

const R = 'run-1'

/** The events of `items` after RUN_STARTED, as the route sends them. */
function mapAll(items: TimelineItem[], options: Partial<AgUiMappingOptions> = {}): AgUiEvent[] {
  const mapping = new AgUiMapping({ threadId: 's1', runId: 'client-run', ...options })
  return [runStartedEvent('s1', 'client-run'), ...items.flatMap(item => mapping.map(item))]
}

/** Every event parses with `@ag-ui/core`'s schema, and the sequence passes `@ag-ui/client`'s verifier. */
async function expectValid(events: AgUiEvent[]): Promise<void> {
  const invalid = events.filter(event => !EventSchemas.safeParse(event).success)
  expect(invalid).toEqual([])
  await expect(lastValueFrom(from(events as BaseEvent[]).pipe(verifyEvents(), toArray()))).resolves.toHaveLength(events.length)
}

const types = (events: AgUiEvent[]): string[] => events.map(event => String(event.type))
/** The events of type `type`. */
const ofType = (events: AgUiEvent[], type: string): AgUiEvent[] => events.filter(event => String(event.type) === type)

const question = (id: string, kind: 'ask_user' | 'present_plan' | 'approval', extra: Record<string, unknown> = {}): TimelineItem => ({
  type: 'question', runId: R, question: { id, kind, question: 'Which one?', createdAt: 1, answerUrl: `http://x/v1/awakeables/${id}/resolve?token=t`, ...extra },
})

describe('AG-UI mapping of a run timeline', () => {
  it('maps a run with text, a tool call and its result to steps, messages and calls', async () => {
    const events = mapAll([
      { type: 'run-start', runId: R, prompt: 'hi', seq: 1 },
      { type: 'step-start', runId: R, step: 1 },
      { type: 'reasoning-delta', runId: R, step: 1, delta: 'think' },
      { type: 'text-delta', runId: R, step: 1, delta: 'Hel' },
      { type: 'text-delta', runId: R, step: 1, delta: 'lo' },
      { type: 'tool-call', runId: R, step: 1, callId: 'c1', name: 'read_file', input: { path: 'a' } },
      { type: 'tool-result', runId: R, step: 1, callId: 'c1', name: 'read_file', output: 'x', isError: false },
      { type: 'step-end', runId: R, step: 1, text: 'Hello', textTruncated: false },
      { type: 'step-start', runId: R, step: 2 },
      { type: 'text-delta', runId: R, step: 2, delta: 'done' },
      { type: 'step-end', runId: R, step: 2, text: 'done', textTruncated: false },
      { type: 'run-end', runId: R, status: 'completed', text: 'done', seq: 9, totals: { usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 0 } } },
    ])
    await expectValid(events)
    expect(types(events)).toEqual([
      'RUN_STARTED', 'STEP_STARTED', 'REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_CONTENT', 'REASONING_MESSAGE_END', 'REASONING_END',
      'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'STEP_FINISHED',
      'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED',
    ])
    expect(ofType(events, 'TOOL_CALL_START')[0]).toMatchObject({ toolCallId: 'c1', toolCallName: 'read_file', parentMessageId: `${R}:1` })
    expect(ofType(events, 'TOOL_CALL_ARGS')[0]).toMatchObject({ delta: '{"path":"a"}' })
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 's1', runId: 'client-run', outcome: { type: 'success' }, result: 'done', usage: [{ inputTokens: 12, outputTokens: 5, totalTokens: 17, cachedInputTokens: 2 }] })
  })

  it('ends the message on step-reset and sends the text again under a new id; a re-sent call goes once', async () => {
    const events = mapAll([
      { type: 'run-start', runId: R, prompt: 'hi', seq: 1 },
      { type: 'step-start', runId: R, step: 1 },
      { type: 'text-delta', runId: R, step: 1, delta: 'Hel' },
      { type: 'tool-call', runId: R, step: 1, callId: 'c1', name: 'shell', input: {} },
      { type: 'step-reset', runId: R, step: 1, reason: 'superseded' },
      { type: 'text-delta', runId: R, step: 1, delta: 'Hello' },
      { type: 'tool-call', runId: R, step: 1, callId: 'c1', name: 'shell', input: {} },
      { type: 'step-reset', runId: R, step: 1, reason: 'journaled-text' },
      { type: 'text-delta', runId: R, step: 1, delta: 'Hello!' },
      { type: 'step-end', runId: R, step: 1, text: 'Hello!', textTruncated: false },
      { type: 'run-end', runId: R, status: 'completed', text: 'Hello!', seq: 5 },
    ])
    await expectValid(events)
    const starts = ofType(events, 'TEXT_MESSAGE_START').map(event => (event as { messageId: string }).messageId)
    expect(new Set(starts).size).toBe(starts.length)
    expect(ofType(events, 'TOOL_CALL_START')).toHaveLength(1)
  })

  it('ends the AG-UI run with an interrupt on a question, with its schema, reason and call', async () => {
    const base: TimelineItem[] = [{ type: 'run-start', runId: R, prompt: 'hi', seq: 1 }, { type: 'step-start', runId: R, step: 1 }, { type: 'tool-call', runId: R, step: 1, callId: 'c1', name: 'ask_user', input: { question: 'Which one?' } }]
    const ask = mapAll([...base, question('q1', 'ask_user', { callId: 'c1', options: ['a', 'b'] }), { type: 'step-end', runId: R, step: 1, text: '', textTruncated: false }])
    await expectValid(ask)
    expect(ask.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt', interrupts: [{ id: 'q1', reason: 'input_required', message: 'Which one?', responseSchema: { type: 'string', enum: ['a', 'b'] } }] } })
    const plan = mapAll([...base, question('q2', 'present_plan', { callId: 'c1' })])
    expect(plan.at(-1)).toMatchObject({ outcome: { interrupts: [{ id: 'q2', reason: 'confirmation' }] } })
    const approval = mapAll([...base, question('q3', 'approval', { callId: 'c1', tool: 'shell', input: '{}' })])
    await expectValid(approval)
    expect(approval.at(-1)).toMatchObject({ outcome: { interrupts: [{ id: 'q3', reason: 'tool_call', toolCallId: 'c1' }] } })
  })

  it('continues a run mid-step after a resume, ignoring the answered question', async () => {
    const events = mapAll([
      question('q1', 'approval', { callId: 'c1' }),
      { type: 'tool-result', runId: R, step: 1, callId: 'c1', name: 'shell', output: 'ok', isError: false },
      { type: 'step-end', runId: R, step: 1, text: '', textTruncated: false },
      { type: 'steer', runId: R, turnId: 't9', text: 'also this' },
      { type: 'step-start', runId: R, step: 2 },
      { type: 'text-delta', runId: R, step: 2, delta: 'ok' },
      { type: 'run-end', runId: R, status: 'completed', text: 'ok', seq: 7 },
    ], { timelineRunId: R, answeredQuestionIds: new Set(['q1']) })
    await expectValid(events)
    expect(types(events).slice(0, 4)).toEqual(['RUN_STARTED', 'STEP_STARTED', 'TOOL_CALL_RESULT', 'STEP_FINISHED'])
    expect(ofType(events, 'TEXT_MESSAGE_START')[0]).toMatchObject({ role: 'user', messageId: 't9' })
  })

  it('replays a run without what the snapshot holds: journaled steps stay silent unless something new comes', async () => {
    const items: TimelineItem[] = [
      { type: 'run-start', runId: R, prompt: 'hi', seq: 1 },
      { type: 'step-start', runId: R, step: 1 },
      { type: 'text-delta', runId: R, step: 1, delta: 'old' },
      { type: 'tool-call', runId: R, step: 1, callId: 'c1', name: 'list_files', input: {} },
      { type: 'tool-result', runId: R, step: 1, callId: 'c1', name: 'list_files', output: 'a', isError: false },
      { type: 'step-end', runId: R, step: 1, text: 'old', textTruncated: false },
      { type: 'step-start', runId: R, step: 2 },
      { type: 'text-delta', runId: R, step: 2, delta: 'asking' },
      { type: 'tool-call', runId: R, step: 2, callId: 'c2', name: 'shell', input: {} },
      { type: 'tool-result', runId: R, step: 2, callId: 'c2', name: 'shell', output: 'b', isError: false },
      { type: 'step-end', runId: R, step: 2, text: 'asking', textTruncated: false },
      { type: 'step-start', runId: R, step: 3 },
      { type: 'text-delta', runId: R, step: 3, delta: 'new' },
      { type: 'step-end', runId: R, step: 3, text: 'new', textTruncated: false },
      { type: 'run-end', runId: R, status: 'completed', text: 'new', seq: 9 },
    ]
    const events = mapAll(items, { timelineRunId: R, journaled: { steps: new Set([1, 2]), calls: new Set(['c1', 'c2']), results: new Set(['c1']) } })
    await expectValid(events)
    expect(types(events)).toEqual(['RUN_STARTED', 'STEP_STARTED', 'TOOL_CALL_RESULT', 'STEP_FINISHED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED'])
    expect(ofType(events, 'TOOL_CALL_RESULT')[0]).toMatchObject({ toolCallId: 'c2' })
  })

  it('locks on the run-start of its prompt, and maps failed and cancelled ends', async () => {
    const other: TimelineItem[] = [{ type: 'run-start', runId: 'other', prompt: 'not mine', seq: 1 }, { type: 'step-start', runId: 'other', step: 1 }, { type: 'run-end', runId: 'other', status: 'completed', text: '', seq: 2 }]
    const failed = mapAll([...other, { type: 'run-start', runId: R, prompt: 'mine', seq: 3 }, { type: 'step-start', runId: R, step: 1 }, { type: 'run-end', runId: R, status: 'failed', text: '', error: 'boom', seq: 4 }], { prompt: 'mine' })
    await expectValid(failed)
    expect(types(failed)).toEqual(['RUN_STARTED', 'STEP_STARTED', 'STEP_FINISHED', 'RUN_ERROR'])
    expect(failed.at(-1)).toMatchObject({ message: 'boom', code: 'run_failed' })
    const long = 'x'.repeat(3_000)
    const cut = mapAll([{ type: 'run-start', runId: R, prompt: `${'x'.repeat(2_000)}…`, seq: 1 }, { type: 'run-end', runId: R, status: 'completed', text: '', seq: 2 }], { prompt: long })
    expect(types(cut)).toEqual(['RUN_STARTED', 'RUN_FINISHED'])
    const cancelled = mapAll([{ type: 'run-start', runId: R, prompt: 'mine', seq: 3 }, { type: 'run-end', runId: R, status: 'cancelled', text: '', seq: 4 }])
    expect(cancelled.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } })
  })

  it('forwards sub-agents only when opted in, attributed with their run id, closed before the run ends', async () => {
    const items: TimelineItem[] = [
      { type: 'run-start', runId: R, prompt: 'hi', seq: 1 },
      { type: 'step-start', runId: R, step: 1 },
      { type: 'child-start', runId: R, childRunId: 'child-1', label: 'worker', depth: 1, task: 'do it' },
      { type: 'child-activity', runId: R, childRunId: 'child-1', label: 'worker', depth: 1, event: 'tool:start', data: { name: 'shell' } },
      { type: 'child-start', runId: R, childRunId: 'child-2', label: 'helper', depth: 1, task: 'x' },
      { type: 'child-end', runId: R, childRunId: 'child-1', label: 'worker', depth: 1, status: 'completed' },
      { type: 'run-end', runId: R, status: 'completed', text: '', seq: 5 },
    ]
    expect(mapAll(items).some(event => event.type.startsWith('SUBAGENT'))).toBe(false)
    const events = mapAll(items, { subagents: true })
    await expectValid(events)
    expect(types(events).filter(type => type.startsWith('SUBAGENT'))).toEqual(['SUBAGENT_STARTED', 'SUBAGENT_STARTED', 'SUBAGENT_FINISHED', 'SUBAGENT_ERROR'])
    expect(ofType(events, 'CUSTOM')[0]).toMatchObject({ subagentRunId: 'child-1' })
  })

  it('produces nothing after the AG-UI run ended', () => {
    const mapping = new AgUiMapping({ threadId: 's1', runId: 'c', timelineRunId: R })
    mapping.map({ type: 'run-end', runId: R, status: 'completed', text: '', seq: 1 })
    expect(mapping.finished).toBe(true)
    expect(mapping.map({ type: 'step-start', runId: R, step: 1 })).toEqual([])
  })

  it('validates every event of randomized item sequences (0 invalid)', async () => {
    let seed = 7
    const random = (): number => { seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648; return seed / 2_147_483_648 }
    let total = 0
    for (let run = 0; run < 200; run++) {
      const items: TimelineItem[] = [{ type: 'run-start', runId: R, prompt: 'p', seq: 1 }]
      for (let step = 1; step <= 1 + Math.floor(random() * 3); step++) {
        items.push({ type: 'step-start', runId: R, step })
        for (let index = 0; index < 12; index++) {
          const roll = random()
          const callId = `c${step}-${index % 3}`
          if (roll < 0.35) items.push({ type: 'text-delta', runId: R, step, delta: `w${index} ` })
          else if (roll < 0.45) items.push({ type: 'reasoning-delta', runId: R, step, delta: 'hmm' })
          else if (roll < 0.55) items.push({ type: 'step-reset', runId: R, step, reason: 'superseded' })
          else if (roll < 0.7) items.push({ type: 'tool-call', runId: R, step, callId, name: 'shell', input: { command: 'ls' } })
          else if (roll < 0.8) items.push({ type: 'tool-result', runId: R, step, callId, name: 'shell', output: 'out', isError: random() < 0.3 })
          else if (roll < 0.85) items.push({ type: 'steer', runId: R, turnId: `steer-${run}-${step}-${index}`, text: 'more' })
          else if (roll < 0.92) items.push({ type: 'child-start', runId: R, childRunId: `k${index % 2}`, label: 'kid', depth: 1, task: 't' })
          else if (roll < 0.96) items.push({ type: 'child-end', runId: R, childRunId: `k${index % 2}`, label: 'kid', depth: 1, status: random() < 0.5 ? 'completed' : 'failed' })
          else items.push(question(`q${run}`, 'approval', { callId }))
        }
        items.push({ type: 'step-end', runId: R, step, text: '', textTruncated: false })
      }
      items.push({ type: 'run-end', runId: R, status: ['completed', 'failed', 'cancelled', 'limit'][run % 4] ?? 'completed', text: '', seq: 99 })
      const events = mapAll(items, { subagents: run % 2 === 0 })
      await expectValid(events)
      total += events.length
    }
    expect(total).toBeGreaterThan(2_000)
  })
})

describe('AG-UI snapshot and resume payloads', () => {
  it('builds messages from turns: user text, assistant text with tool calls, tool results', () => {
    const messages = snapshotMessages([
      { id: 't1', role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { id: 't2', role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }, { type: 'text', text: 'let me' }, { type: 'tool_use', id: 'c1', name: 'shell', input: { command: 'ls' } }] },
      { id: 't3', role: 'user', content: [{ type: 'tool_result', toolUseId: 'c1', content: [{ type: 'text', text: 'a b' }], isError: true }] },
    ])
    expect(messages).toEqual([
      { id: 't1', role: 'user', content: 'hi' },
      { id: 't2', role: 'assistant', content: 'let me', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":"ls"}' } }] },
      { id: 't3:c1', role: 'tool', toolCallId: 'c1', content: 'a b', error: 'a b' },
    ])
    expect(EventSchemas.safeParse({ type: 'MESSAGES_SNAPSHOT', messages }).success).toBe(true)
  })

  it('turns resume entries into answers: approvals into decisions, questions into their payload', () => {
    expect(answerOfResume({ interruptId: 'q', status: 'resolved', payload: { approved: true } }, 'approval')).toEqual({ decision: 'approve' })
    expect(answerOfResume({ interruptId: 'q', status: 'resolved', payload: { approved: false, reason: 'no' } }, 'approval')).toEqual({ decision: 'deny', reason: 'no' })
    expect(answerOfResume({ interruptId: 'q', status: 'cancelled' }, 'approval')).toEqual({ decision: 'deny', reason: 'cancelled by the user' })
    expect(answerOfResume({ interruptId: 'q', status: 'resolved', payload: 'blue' }, 'ask_user')).toEqual({ answer: 'blue' })
    expect(answerOfResume({ interruptId: 'q', status: 'resolved', payload: { approved: true } }, undefined)).toEqual({ decision: 'approve' })
  })
})
