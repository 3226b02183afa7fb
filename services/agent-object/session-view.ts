import type { RunTotals, SessionData, SessionTurn } from 'zidane/session'
import type { CurrentInvocation, PendingQuestion, SessionEvent, SessionView } from '../contract'

/** Sums the totals of the session's top-level runs (each already includes its children). */
export function sessionTotals(session: SessionData | null): RunTotals {
  const totals: RunTotals = { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 }
  for (const run of session?.runs ?? []) {
    if (run.label !== undefined || !run.totals) continue
    totals.usage.inputTokens += run.totals.usage.inputTokens
    totals.usage.outputTokens += run.totals.usage.outputTokens
    totals.usage.cacheReadTokens += run.totals.usage.cacheReadTokens
    totals.usage.cacheWriteTokens += run.totals.usage.cacheWriteTokens
    totals.costUsd = Math.round((totals.costUsd + run.totals.costUsd) * 1e9) / 1e9
    totals.modelRequests += run.totals.modelRequests
    totals.toolCalls += run.totals.toolCalls
    totals.turns += run.totals.turns
  }
  return totals
}

/** Builds what the shared `get` handler returns. */
export function buildSessionView(key: string, session: SessionData | null, pending: PendingQuestion[], invocation: CurrentInvocation | null): SessionView {
  const cancelled = invocation?.status === 'cancelled'
  const view: SessionView = {
    exists: session !== null || invocation !== null,
    id: key,
    status: cancelled ? 'cancelled' : session?.status ?? (invocation ? 'running' : 'idle'),
    turns: session?.turns ?? [],
    runs: session?.runs ?? [],
    usage: sessionTotals(session),
    pending,
  }
  if (invocation) view.invocation = invocation
  return view
}

/**
 * Derives the session's ordered event log from its turns and runs. Turns and runs are append-only, so the log only
 * grows at its end and a `seq` always names the same event: clients resume from `Last-Event-ID`.
 */
export function deriveEvents(session: SessionData | null): SessionEvent[] {
  const events: Omit<SessionEvent, 'seq'>[] = []
  const runs = new Map((session?.runs ?? []).map(run => [run.id, run]))
  const started = new Set<string>()
  const toolNames = new Map<string, string>()
  const openTurns: OpenTurn[] = []
  const lastTurnOfRun = new Map((session?.turns ?? []).map(turn => [turn.runId, turn.id]))
  for (const turn of session?.turns ?? []) {
    const run = runs.get(turn.runId)
    if (run && !started.has(run.id)) {
      started.add(run.id)
      events.push(run.label ? { type: 'child:start', at: run.startedAt, data: { runId: run.id, label: run.label, depth: run.depth, task: run.prompt } } : { type: 'run:start', at: run.startedAt, data: { runId: run.id, prompt: run.prompt } })
    }
    for (const block of turn.content) {
      if (block.type === 'tool_use') {
        toolNames.set(block.id, block.name)
        events.push({ type: 'tool:start', at: turn.createdAt, data: { runId: turn.runId, callId: block.id, name: block.name, input: block.input } })
        if (block.name === 'ask_user' || block.name === 'present_plan') events.push({ type: 'question', at: turn.createdAt, data: { runId: turn.runId, callId: block.id, kind: block.name, question: block.input.question ?? block.input.plan ?? '' } })
      }
      if (block.type === 'tool_result') {
        events.push({ type: 'tool:end', at: turn.createdAt, data: { runId: turn.runId, callId: block.toolUseId, name: toolNames.get(block.toolUseId) ?? '', isError: block.isError === true } })
        closeCall(openTurns, block.toolUseId, turn.createdAt, events)
      }
    }
    if (turn.role === 'assistant') openTurn(openTurns, turn, events)
    if (run && run.endedAt !== undefined && lastTurnOfRun.get(run.id) === turn.id) {
      events.push(run.label ? { type: 'child:end', at: run.endedAt, data: { runId: run.id, label: run.label, status: run.status } } : { type: 'run:end', at: run.endedAt, data: { runId: run.id, status: run.status, text: run.text ?? '' } })
    }
  }
  return events.map((event, index) => ({ ...event, seq: index + 1 }))
}

/** A model turn whose tool calls have not all returned yet: its `turn:end` comes when the last result arrives. */
interface OpenTurn { runId: string; turnId: string; calls: Set<string> }

function openTurn(openTurns: OpenTurn[], turn: SessionTurn, events: Omit<SessionEvent, 'seq'>[]): void {
  const calls = new Set(turn.content.flatMap(block => (block.type === 'tool_use' ? [block.id] : [])))
  if (calls.size === 0) events.push({ type: 'turn:end', at: turn.createdAt, data: { runId: turn.runId, turnId: turn.id } })
  else openTurns.push({ runId: turn.runId, turnId: turn.id, calls })
}

function closeCall(openTurns: OpenTurn[], callId: string, at: number, events: Omit<SessionEvent, 'seq'>[]): void {
  const index = openTurns.findIndex(open => open.calls.has(callId))
  const open = openTurns[index]
  if (!open) return
  open.calls.delete(callId)
  if (open.calls.size > 0) return
  openTurns.splice(index, 1)
  events.push({ type: 'turn:end', at, data: { runId: open.runId, turnId: open.turnId } })
}
