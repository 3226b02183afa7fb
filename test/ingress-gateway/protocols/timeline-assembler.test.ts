import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '../../../contract/session'
import type { LiveEvent } from '../../../ingress-gateway/live-deltas'
import { TimelineAssembler } from '../../../ingress-gateway/protocols/timeline-assembler'
import type { TimelineItem } from '../../../ingress-gateway/protocols/timeline-items'

let seq = 0
const durable = (type: SessionEvent['type'], data: Record<string, unknown>): SessionEvent => ({ seq: ++seq, type, at: 0, data })
const delta = (turn: number, offset: number, text: string, attempt = 'a1', runId = 'r1', kind: 'text' | 'thinking' = 'text'): LiveEvent =>
  ({ type: 'model:delta', data: { runId, turn, attempt, kind, offset, text } })
const superseded = (turn: number, attempt: string, nextAttempt: string): LiveEvent => ({ type: 'model:superseded', data: { runId: 'r1', turn, attempt, nextAttempt } })

/** The text a step's deltas spell, honouring `step-reset` as a client does (it drops the step's parts). */
function stepText(items: TimelineItem[], step: number): string {
  let text = ''
  for (const item of items) {
    if (item.type === 'step-reset' && item.step === step) text = ''
    if (item.type === 'text-delta' && item.step === step) text += item.delta
  }
  return text
}

function assembler(): TimelineAssembler {
  return new TimelineAssembler(id => `http://gateway/answer/${id}`)
}

describe('the timeline assembler', () => {
  it('streams a step from its live deltas and ends it with the journaled text', () => {
    const a = assembler()
    const items = [
      ...a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' })),
      ...a.live(delta(0, 0, 'Hello ')),
      ...a.live(delta(0, 6, 'world')),
      ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'Hello world' })),
      ...a.durable(durable('run:end', { runId: 'r1', status: 'completed', text: 'Hello world', totals: { costUsd: 0.01 } })),
    ]
    expect(items.map(item => item.type)).toEqual(['run-start', 'step-start', 'text-delta', 'text-delta', 'step-end', 'run-end'])
    expect(stepText(items, 0)).toBe('Hello world')
    expect(items.at(-1)).toMatchObject({ status: 'completed', totals: { costUsd: 0.01 } })
  })

  it('sends the rest of the journaled text when the deltas stopped short', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = [...a.live(delta(0, 0, 'Hel')), ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'Hello' }))]
    expect(items.filter(item => item.type === 'step-reset')).toEqual([])
    expect(stepText(items, 0)).toBe('Hello')
  })

  it('resets the step when the deltas disagree with the journal, and sends its tool items again', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = [
      ...a.live(delta(0, 0, 'draft text')),
      ...a.durable(durable('tool:start', { runId: 'r1', turnId: 'r1-t0-a', callId: 'c1', name: 'read_file', input: { path: 'a' } })),
      ...a.durable(durable('tool:end', { runId: 'r1', turnId: 'r1-t0-r', callId: 'c1', name: 'read_file', isError: false, output: 'A' })),
      ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'final text' })),
    ]
    const reset = items.findIndex(item => item.type === 'step-reset')
    expect(reset).toBeGreaterThan(0)
    expect(items.slice(reset).map(item => item.type)).toEqual(['step-reset', 'text-delta', 'tool-call', 'tool-result', 'step-end'])
    expect(stepText(items, 0)).toBe('final text')
  })

  it('a superseded attempt resets the step; the new attempt streams from offset 0', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = [
      ...a.live(delta(0, 0, 'first try')),
      ...a.live(superseded(0, 'a1', 'a2')),
      ...a.live(delta(0, 0, 'second', 'a2')),
      ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'second' })),
    ]
    expect(items.map(item => item.type)).toEqual(['step-start', 'text-delta', 'step-reset', 'text-delta', 'step-end'])
    expect(stepText(items, 0)).toBe('second')
  })

  it('holds the next step\'s deltas until the end of the batch that ends the step before (a steer in it goes first)', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = [
      ...a.live(delta(0, 0, 'calling')),
      ...a.durable(durable('tool:start', { runId: 'r1', turnId: 'r1-t0-a', callId: 'c1', name: 'glob', input: {} })),
      ...a.live(delta(1, 0, 'done')),
      ...a.durable(durable('tool:end', { runId: 'r1', turnId: 'r1-t0-r', callId: 'c1', name: 'glob', isError: false, output: '' })),
      ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'calling' })),
      ...a.durable(durable('steer', { runId: 'r1', turnId: 'r1-t1-s', text: 'and then?' })),
      ...a.endOfBatch(),
      ...a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t1-a', text: 'done' })),
    ]
    expect(items.map(item => `${item.type}${'step' in item ? `@${item.step}` : ''}`)).toEqual([
      'step-start@0', 'text-delta@0', 'tool-call@0', 'tool-result@0', 'step-end@0', 'steer', 'step-start@1', 'text-delta@1', 'step-end@1',
    ])
  })

  it('drops late copies of a step that already ended', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'whole' }))
    expect(a.live(delta(0, 0, 'whole'))).toEqual([])
    expect(a.durable(durable('turn:end', { runId: 'r1', turnId: 'r1-t0-a', text: 'whole' }))).toEqual([])
  })

  it('places deltas that arrive before their run is in the log once it is', () => {
    const a = assembler()
    expect(a.live(delta(0, 0, 'early'))).toEqual([])
    const items = a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    expect(items.map(item => item.type)).toEqual(['run-start', 'step-start', 'text-delta'])
  })

  it('a run that started before the follow is placed by its first event, without run-start', () => {
    const a = assembler()
    const items = a.durable(durable('steer', { runId: 'r1', turnId: 'r1-t2-s', text: 'also this' }))
    expect(items).toEqual([{ type: 'steer', runId: 'r1', turnId: 'r1-t2-s', text: 'also this' }])
  })

  it('reports each pending question once, for the run whose call it belongs to, with its answer link', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    a.durable(durable('tool:start', { runId: 'r1', turnId: 'r1-t0-a', callId: 'c1', name: 'shell', input: {} }))
    expect(a.awaitsCalls()).toBe(true)
    const approval = { id: 'prom_1', kind: 'approval' as const, callId: 'c1', question: 'run shell?', createdAt: 1, tool: 'shell' }
    expect(a.pending([approval])).toEqual([{ type: 'question', runId: 'r1', question: { ...approval, answerUrl: 'http://gateway/answer/prom_1' } }])
    expect(a.pending([approval])).toEqual([])
    expect(a.pending([{ ...approval, id: 'prom_2', callId: 'other' }])).toEqual([])
    a.durable(durable('tool:end', { runId: 'r1', turnId: 'r1-t0-r', callId: 'c1', name: 'shell', isError: false, output: 'ok' }))
    expect(a.awaitsCalls()).toBe(false)
  })

  it('maps sub-agent events to child items of the running run', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = [
      ...a.durable(durable('child:start', { runId: 'c-run', label: 'helper', depth: 1, task: 'count' })),
      ...a.durable(durable('tool:start', { runId: 'c-run', label: 'helper', depth: 1, callId: 'x', name: 'glob', input: {} })),
      ...a.durable(durable('child:end', { runId: 'c-run', label: 'helper', depth: 1, status: 'completed', totals: { costUsd: 1 } })),
    ]
    expect(items.map(item => item.type)).toEqual(['child-start', 'child-activity', 'child-end'])
    expect(items.every(item => 'runId' in item && item.runId === 'r1')).toBe(true)
    expect(a.live({ type: 'model:delta', data: { runId: 'c-run', turn: 0, attempt: 'x', kind: 'text', offset: 0, text: 'child text', label: 'helper' } })).toEqual([])
  })

  it('places sub-agent events by the run that spawned them, also after that run ended', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'first' }))
    a.durable(durable('run:end', { runId: 'r1', status: 'completed', text: '' }))
    a.durable(durable('run:start', { runId: 'r2', prompt: 'second' }))
    const items = [
      ...a.durable(durable('child:start', { runId: 'c1', label: 'child-1', depth: 1, parentRunId: 'r1', parentCallId: 'call-9', task: 't' })),
      ...a.durable(durable('child:start', { runId: 'g1', label: 'child-2', depth: 2, parentRunId: 'c1', task: 'g' })),
      ...a.durable(durable('child:end', { runId: 'c1', label: 'child-1', depth: 1, parentRunId: 'r1', status: 'completed' })),
    ]
    expect(items.map(item => [item.type, 'runId' in item ? item.runId : ''])).toEqual([['child-start', 'r1'], ['child-start', 'r1'], ['child-end', 'r1']])
    expect(items[0]).toMatchObject({ parentCallId: 'call-9' })
  })

  it('a cancelled run ends without waiting for its open step', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    a.live(delta(0, 0, 'partial'))
    const items = a.durable(durable('run:end', { runId: 'r1', status: 'cancelled', text: '' }))
    expect(items.map(item => item.type)).toEqual(['run-end'])
    expect(a.live(delta(0, 7, ' more'))).toEqual([])
  })

  it('reasoning deltas stream as reasoning, not text', () => {
    const a = assembler()
    a.durable(durable('run:start', { runId: 'r1', prompt: 'hi' }))
    const items = a.live(delta(0, 0, 'thinking…', 'a1', 'r1', 'thinking'))
    expect(items.map(item => item.type)).toEqual(['step-start', 'reasoning-delta'])
  })
})
