import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime } from 'zidane/durable'
import type { SteeredMessage, SteeringInbox } from 'zidane/durable'
import { deliverSteering } from 'zidane/durable/sqlite'
import { createSession } from 'zidane/session'
import { scriptedProvider } from 'zidane/testing'
import type { ModelRequest } from 'zidane/providers'
import { useTempFiles } from '../durable/sqlite/sqlite-test-helpers'

const step: ToolDef = { spec: { name: 'step', description: 'One step of work', inputSchema: { type: 'object', properties: {} } }, execute: async () => 'ok' }

/** A 3-turn script: two turns of one tool call each, then the answer. */
const threeTurns = [{ toolCalls: [{ name: 'step', id: 'call_1', input: {} }] }, { toolCalls: [{ name: 'step', id: 'call_2', input: {} }] }, { text: 'done' }]

/** The texts of a request's last message (the new user content of that turn). */
function newTexts(request: ModelRequest | undefined): string[] {
  return (request?.messages.at(-1)?.content ?? []).flatMap(block => (block.type === 'text' ? [block.text] : []))
}

function mentions(request: ModelRequest, text: string): number {
  return request.messages.flatMap(message => message.content).filter(block => block.type === 'text' && block.text === text).length
}

describe('steering a running agent', () => {
  const files = useTempFiles()

  it('SQLite: a message saved during turn 1 reaches the model once, in the request of turn 2, after the tool results', async () => {
    const runtime = files.open()
    const provider = scriptedProvider(threeTurns)
    const other = files.open()
    const tool: ToolDef = { ...step, execute: async () => { if (provider.requests.length === 1) await other.steer('s1', 'also check B'); return 'ok' } }
    const seen: SteeredMessage[][] = []
    const agent = createAgent({ provider, tools: [tool], durable: runtime, sessionId: 's1', hooks: { steering: event => { seen.push(event.messages) } } })
    const stats = await agent.run({ prompt: 'do A' })
    expect(stats.status).toBe('completed')
    expect(provider.requests.map(newTexts)).toEqual([['do A'], ['also check B'], []])
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ type: 'tool_result', toolUseId: 'call_1' })
    expect(provider.requests.map(request => mentions(request, 'also check B'))).toEqual([0, 1, 1])
    expect(seen.map(messages => messages.map(message => message.text))).toEqual([['also check B']])
    const turns = (await runtime.stores.session.load('s1'))?.turns ?? []
    expect(turns.filter(turn => turn.id.endsWith('-t2-s')).map(turn => turn.content)).toEqual([[{ type: 'text', text: 'also check B' }]])
    // Delivered into the run: nothing is left for a run after it.
    expect(await deliverSteering(agent, runtime)).toEqual([])
    expect(await runtime.pendingSteering('s1')).toEqual([])
  })

  it('SQLite: taking for the same run and turn again returns the same messages (replay-stable), never a later one', async () => {
    const runtime = files.open()
    const session = await createSession({ id: 's2', store: runtime.stores.session })
    await session.upsertRun({ id: 'run_1_x', status: 'running', prompt: 'go', startedAt: 1, depth: 0, limits: {} })
    runtime.flush()
    await runtime.steer('s2', 'first')
    const take = (turn: number): Promise<string[]> => runtime.steering.take({ sessionId: 's2', runId: 'run_1_x', turn }).then(messages => messages.map(message => message.text))
    expect(await take(2)).toEqual(['first'])
    await runtime.steer('s2', 'second')
    expect(await take(2)).toEqual(['first'])
    expect(await take(3)).toEqual(['second'])
    expect(await take(3)).toEqual(['second'])
    expect(await take(4)).toEqual([])
  })

  it('a message that arrives after the last boundary becomes the prompt of the next run (SQLite)', async () => {
    const runtime = files.open()
    const provider = scriptedProvider([{ text: 'answer' }, { text: 'second answer' }])
    const agent = createAgent({ provider, durable: runtime, sessionId: 's3', hooks: { 'model:request': async () => { if (provider.requests.length === 0) await runtime.steer('s3', 'late') } } })
    await agent.run({ prompt: 'first' })
    const delivered = await deliverSteering(agent, runtime)
    expect(delivered.map(stats => stats.status)).toEqual(['completed'])
    expect(newTexts(provider.requests[1])).toEqual(['late'])
  })

  it('any runtime takes messages from the steering option; sub-agent depths never do', async () => {
    const waiting = ['from the inbox']
    const taken: Array<{ runId: string; turn: number }> = []
    const steering: SteeringInbox = { take: async request => { taken.push({ runId: request.runId, turn: request.turn }); return waiting.splice(0).map((text, index) => ({ id: `m${index}`, text })) } }
    const provider = scriptedProvider(threeTurns)
    const agent = createAgent({ provider, tools: [step], durable: createMemoryJournalRuntime({ journal: createMemoryJournal() }), steering })
    await agent.run({ prompt: 'go' })
    expect(taken.map(entry => entry.turn)).toEqual([1, 2, 3])
    expect(newTexts(provider.requests[0])).toEqual(['go', 'from the inbox'])
    const child = createAgent({ provider: scriptedProvider([{ text: 'child' }]), steering, depth: 1 })
    await child.run({ prompt: 'task' })
    expect(taken).toHaveLength(3)
  })
})

describe('approval answers', () => {
  const run = async (answer: unknown, behavior = {}): Promise<{ result: unknown; ran: number }> => {
    let ran = 0
    const tool: ToolDef = { ...step, execute: async () => { ran++; return 'ran' } }
    const runtime = createMemoryJournalRuntime({ journal: createMemoryJournal() })
    const provider = scriptedProvider([{ toolCalls: [{ name: 'step', id: 'call_1', input: { path: 'x' } }] }, { text: 'done' }])
    const agent = createAgent({
      provider, tools: [tool], durable: runtime, canUseTool: () => 'ask', behavior,
      requestInteraction: async request => {
        expect(request.tool).toEqual({ name: 'step', input: { path: 'x' } })
        if (answer !== undefined) await runtime.resolveAwakeable(request.awakeable.id, answer as never)
      },
    })
    const stats = await agent.run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    return { result: provider.requests[1]?.messages.at(-1)?.content[0], ran }
  }

  it('{ decision: "approve" } runs the call', async () => {
    expect(await run({ decision: 'approve' })).toMatchObject({ ran: 1, result: { content: 'ran' } })
  })

  it('{ decision: "deny", reason } gives the model an error result with the reason, and the run goes on', async () => {
    expect(await run({ decision: 'deny', reason: 'not on Fridays' })).toEqual({ ran: 0, result: { type: 'tool_result', toolUseId: 'call_1', isError: true, content: 'The user did not approve this call. Reason: not on Fridays' } })
  })

  it('an approval nobody answers before approvalTimeoutMs is a denial', async () => {
    expect(await run(undefined, { approvalTimeoutMs: 50 })).toEqual({ ran: 0, result: { type: 'tool_result', toolUseId: 'call_1', isError: true, content: 'The approval of this call expired before anyone answered, so it was denied.' } })
  })
})
