import type { SessionEvent } from '../../contract/session'
import type { PendingQuestion } from '../../contract/session'
import type { LiveEvent } from '../live-deltas'
import type { RunTotals, TimelineItem } from './timeline-items'

/** Deltas of runs not seen yet in the durable log, kept until it shows them; past this many the oldest are dropped. */
const MAX_UNPLACED_DELTAS = 5_000

type LiveDelta = Extract<LiveEvent, { type: 'model:delta' }>['data']
type StepItem = Extract<TimelineItem, { type: 'tool-call' | 'tool-result' }>

/** The step of a run in progress: its turn number (as in its turn ids and its live deltas) and what it has sent. */
interface OpenStep {
  turn: number
  /** Visible text sent since the step's start (or its last reset). */
  text: string
  /** Tool calls and results sent in this step: sent again after a reset. */
  toolItems: StepItem[]
  openCalls: Set<string>
}

interface RunState {
  runId: string
  step: OpenStep | undefined
  /** The highest turn whose step ended: later deltas or events of it are late copies. */
  closedThrough: number
  /** Deltas of later turns, held until the durable end of the open step. */
  heldDeltas: LiveDelta[]
  ended: boolean
}

/**
 * Assembles the {@link TimelineItem}s of a session from its durable events, live events and pending questions, fed in
 * the order they arrive. Pure and synchronous: each feed method returns the items it produced. Steps are identified
 * by the run's turn number, which the live deltas carry and the durable events' turn ids (`<run>-t<n>-a|r`) encode,
 * so a late or replayed copy of a step is recognized however the two carriers interleave.
 */
export class TimelineAssembler {
  private readonly runs = new Map<string, RunState>()
  private readonly unplaced: LiveDelta[] = []
  private readonly askedQuestions = new Set<string>()
  private readonly callTurns = new Map<string, number>()
  /** The top-level run of each sub-agent seen start (grandchildren name their parent sub-agent). */
  private readonly childParents = new Map<string, string>()

  constructor(private readonly answerUrl: (questionId: string) => string) {}

  /** Items of one durable event (events of sub-agents, with a `label`, become child items). */
  durable(event: SessionEvent): TimelineItem[] {
    const data = event.data
    if (typeof data.label === 'string') return this.childEvent(event)
    const runId = String(data.runId ?? '')
    if (runId === '') return []
    const out: TimelineItem[] = []
    if (event.type === 'run:start') {
      this.runs.set(runId, newRun(runId))
      out.push({ type: 'run-start', runId, prompt: String(data.prompt ?? ''), seq: event.seq })
      out.push(...this.placeUnplaced(runId))
      return out
    }
    const run = this.runOf(runId, out)
    if (event.type === 'tool:start') this.toolCall(run, data, out)
    else if (event.type === 'tool:end') this.toolResult(run, data, out)
    else if (event.type === 'turn:end') this.turnEnd(run, data, out)
    else if (event.type === 'steer') out.push({ type: 'steer', runId, turnId: String(data.turnId ?? ''), text: String(data.text ?? '') })
    else if (event.type === 'run:end') this.runEnd(run, event, out)
    return out
  }

  /** Items of one live event: deltas of the step in progress; a superseded attempt resets its step. */
  live(event: LiveEvent): TimelineItem[] {
    if (event.data.label !== undefined) return []
    const run = this.runs.get(event.data.runId)
    if (event.type === 'model:superseded') return run ? this.superseded(run, event.data.turn) : []
    if (run === undefined) {
      this.unplaced.push(event.data)
      if (this.unplaced.length > MAX_UNPLACED_DELTAS) this.unplaced.shift()
      return []
    }
    const out: TimelineItem[] = []
    this.delta(run, event.data, out)
    return out
  }

  /** Items of the session's pending list: each question or approval once, for the run whose call it belongs to. */
  pending(questions: readonly PendingQuestion[]): TimelineItem[] {
    const out: TimelineItem[] = []
    for (const question of questions) {
      if (this.askedQuestions.has(question.id)) continue
      const run = this.runWaitingFor(question.callId)
      if (run === undefined) continue
      this.askedQuestions.add(question.id)
      out.push({ type: 'question', runId: run.runId, question: { ...question, answerUrl: this.answerUrl(question.id) } })
    }
    return out
  }

  /** Whether a run has calls open (a question or approval may be pending): the moment to read the pending list. */
  awaitsCalls(): boolean {
    for (const run of this.runs.values()) if (!run.ended && (run.step?.openCalls.size ?? 0) > 0) return true
    return false
  }

  private runOf(runId: string, out: TimelineItem[]): RunState {
    const known = this.runs.get(runId)
    if (known) return known
    // A run that started before the follow's first event: its items are placed without a `run-start`.
    const run = newRun(runId)
    this.runs.set(runId, run)
    out.push(...this.placeUnplaced(runId))
    return run
  }

  private placeUnplaced(runId: string): TimelineItem[] {
    const run = this.runs.get(runId)!
    const mine = this.unplaced.filter(delta => delta.runId === runId)
    if (mine.length === 0) return []
    this.unplaced.splice(0, this.unplaced.length, ...this.unplaced.filter(delta => delta.runId !== runId))
    const out: TimelineItem[] = []
    for (const delta of mine) this.delta(run, delta, out)
    return out
  }

  private delta(run: RunState, delta: LiveDelta, out: TimelineItem[]): void {
    if (run.ended || delta.turn <= run.closedThrough) return
    if ((run.step !== undefined && delta.turn > run.step.turn) || (run.step === undefined && run.heldDeltas.length > 0)) {
      run.heldDeltas.push(delta)
      return
    }
    const step = this.stepFor(run, delta.turn, out)
    if (delta.kind === 'thinking') {
      out.push({ type: 'reasoning-delta', runId: run.runId, step: step.turn, delta: delta.text })
      return
    }
    // The tracker hands over each attempt's text once, in order, from offset 0: anything else is not this step's text.
    if (delta.offset !== step.text.length) return
    step.text += delta.text
    out.push({ type: 'text-delta', runId: run.runId, step: step.turn, delta: delta.text })
  }

  private superseded(run: RunState, turn: number): TimelineItem[] {
    const step = run.step
    if (step === undefined || step.turn !== turn) return []
    step.text = ''
    return [{ type: 'step-reset', runId: run.runId, step: turn, reason: 'superseded' }, ...step.toolItems]
  }

  /** The open step of `turn`, opened (with `step-start`) when none is. */
  private stepFor(run: RunState, turn: number, out: TimelineItem[]): OpenStep {
    if (run.step !== undefined) return run.step
    run.step = { turn, text: '', toolItems: [], openCalls: new Set() }
    out.push({ type: 'step-start', runId: run.runId, step: turn })
    return run.step
  }

  private toolCall(run: RunState, data: Record<string, unknown>, out: TimelineItem[]): void {
    const callId = String(data.callId ?? '')
    const turn = turnOf(data.turnId) ?? run.step?.turn ?? run.closedThrough + 1
    if (turn <= run.closedThrough || callId === '' || this.callTurns.has(callId)) return
    this.closeEarlierStep(run, turn, out)
    const step = this.stepFor(run, turn, out)
    this.callTurns.set(callId, step.turn)
    const item: StepItem = { type: 'tool-call', runId: run.runId, step: step.turn, callId, name: String(data.name ?? ''), input: isRecord(data.input) ? data.input : {} }
    step.toolItems.push(item)
    step.openCalls.add(callId)
    out.push(item)
  }

  private toolResult(run: RunState, data: Record<string, unknown>, out: TimelineItem[]): void {
    const callId = String(data.callId ?? '')
    const step = run.step
    if (step === undefined || !step.openCalls.has(callId)) return
    step.openCalls.delete(callId)
    const item: StepItem = { type: 'tool-result', runId: run.runId, step: step.turn, callId, name: String(data.name ?? ''), output: String(data.output ?? ''), isError: data.isError === true }
    step.toolItems.push(item)
    out.push(item)
  }

  /** The journaled end of a step: its text is authoritative; what the deltas sent is completed, or reset and sent whole. */
  private turnEnd(run: RunState, data: Record<string, unknown>, out: TimelineItem[]): void {
    const turn = turnOf(data.turnId) ?? run.step?.turn ?? run.closedThrough + 1
    if (turn <= run.closedThrough) return
    this.closeEarlierStep(run, turn, out)
    const step = this.stepFor(run, turn, out)
    const text = String(data.text ?? '')
    const truncated = data.textTruncated === true
    if (text.startsWith(step.text)) {
      if (text.length > step.text.length) out.push({ type: 'text-delta', runId: run.runId, step: turn, delta: text.slice(step.text.length) })
    } else if (!(truncated && step.text.startsWith(text))) {
      out.push({ type: 'step-reset', runId: run.runId, step: turn, reason: 'journaled-text' })
      if (text !== '') out.push({ type: 'text-delta', runId: run.runId, step: turn, delta: text })
      out.push(...step.toolItems)
    }
    out.push({ type: 'step-end', runId: run.runId, step: turn, text, textTruncated: truncated })
    this.closeStep(run, turn)
  }

  /** A durable item of a later turn while a step is open: that step ended without its `turn:end` reaching us. */
  private closeEarlierStep(run: RunState, turn: number, out: TimelineItem[]): void {
    const step = run.step
    if (step === undefined || step.turn >= turn) return
    out.push({ type: 'step-end', runId: run.runId, step: step.turn, text: step.text, textTruncated: false })
    this.closeStep(run, step.turn)
  }

  /**
   * The end of a batch of durable events: the deltas held for the steps after those that ended in it go out now, so
   * what the batch holds after a step's end (a steering message the next step takes) comes before that step.
   */
  endOfBatch(): TimelineItem[] {
    const out: TimelineItem[] = []
    for (const run of this.runs.values()) {
      if (run.step !== undefined || run.heldDeltas.length === 0) continue
      const held = run.heldDeltas
      run.heldDeltas = []
      for (const delta of held) this.delta(run, delta, out)
    }
    return out
  }

  private closeStep(run: RunState, turn: number): void {
    run.step = undefined
    run.closedThrough = Math.max(run.closedThrough, turn)
  }

  private runEnd(run: RunState, event: SessionEvent, out: TimelineItem[]): void {
    const data = event.data
    run.ended = true
    run.step = undefined
    run.heldDeltas = []
    const totals = isRecord(data.totals) ? { totals: data.totals as RunTotals } : {}
    const error = typeof data.error === 'string' ? { error: data.error } : {}
    out.push({ type: 'run-end', runId: run.runId, status: String(data.status ?? ''), text: String(data.text ?? ''), ...error, ...totals, seq: event.seq })
  }

  private runWaitingFor(callId: string | undefined): RunState | undefined {
    const open = [...this.runs.values()].filter(run => !run.ended && (run.step?.openCalls.size ?? 0) > 0)
    return open.find(run => callId !== undefined && run.step!.openCalls.has(callId)) ?? (callId === undefined ? open.at(-1) : undefined)
  }

  private childEvent(event: SessionEvent): TimelineItem[] {
    const data = event.data
    const childRunId = String(data.runId ?? '')
    const parent = this.topRunOf(data.parentRunId)
    if (parent === undefined) return []
    if (event.type === 'child:start') this.childParents.set(childRunId, parent)
    const parentCallId = typeof data.parentCallId === 'string' ? { parentCallId: data.parentCallId } : {}
    const base = { runId: parent, childRunId, label: String(data.label), depth: Number(data.depth ?? 1), ...parentCallId }
    if (event.type === 'child:start') return [{ type: 'child-start', ...base, task: String(data.task ?? '') }]
    if (event.type === 'child:end') return [{ type: 'child-end', ...base, status: String(data.status ?? ''), ...(isRecord(data.totals) ? { totals: data.totals } : {}) }]
    if (event.type === 'tool:start' || event.type === 'tool:end' || event.type === 'turn:end') return [{ type: 'child-activity', ...base, event: event.type, data }]
    return []
  }

  /**
   * The top-level run a sub-agent's event belongs to: the run (or the sub-agent) its `parentRunId` names; without one
   * (events of older releases), the latest run not ended. Sub-agents' events may reach the log after their run ended.
   */
  private topRunOf(parentRunId: unknown): string | undefined {
    if (typeof parentRunId === 'string') return this.runs.has(parentRunId) ? parentRunId : this.childParents.get(parentRunId)
    return [...this.runs.values()].filter(run => !run.ended).at(-1)?.runId
  }
}

function newRun(runId: string): RunState {
  return { runId, step: undefined, closedThrough: -1, heldDeltas: [], ended: false }
}

/** The turn number a turn id encodes (`<run>-t<n>-a` or `-r`), or undefined for other turns. */
function turnOf(turnId: unknown): number | undefined {
  const match = typeof turnId === 'string' ? /-t(\d+)-[ar]$/.exec(turnId) : null
  return match ? Number(match[1]) : undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
