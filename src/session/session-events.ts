import type { ToolUseBlock } from '../providers/content'
import type { SessionMeta, SessionRun, SessionStore, SessionTurn } from './types'

/**
 * The type of a session event. The same events feed the deployment's SSE stream, the CLI's `--stream-json` and the
 * agent's `session:event` hook.
 */
export type SessionEventType =
  | 'run:start' | 'run:end' | 'turn:end' | 'tool:start' | 'tool:end' | 'question' | 'steer'
  | 'child:start' | 'child:end'

/** One event of a session's ordered log (`seq` starts at 1 and never names another event). */
export interface SessionEvent {
  seq: number
  type: SessionEventType
  /** Durable time of the event (ms since the epoch): the time of the write it comes from. */
  at: number
  data: Record<string, unknown>
}

/** An event before a log numbers it. */
export type NewSessionEvent = Omit<SessionEvent, 'seq'>

/** Longest JSON of a tool input, a prompt or a text an event carries (the session keeps the whole of it). */
export const EVENT_TEXT_LIMIT = 2_000

/** Longest text a `turn:end` carries whole (a longer one is cut and flagged `textTruncated`). */
export const TURN_TEXT_LIMIT = 32_000

/**
 * Who records: the session's own runs (depth 0), or a sub-agent, whose events carry its label, its depth and, when
 * known, the run and the `spawn` call that started it (`parentRunId`, `parentCallId`).
 */
export interface RecorderIdentity { depth: number; label?: string; parentRunId?: string; parentCallId?: string }

/**
 * Turns the session writes of one agent into {@link NewSessionEvent}s, as they happen. It reads nothing but what the agent writes, in
 * the agent's order, so on a replay it derives the same events at the same points: each batch it hands to `publish`
 * can be a journaled call. Turns of sub-agents merged into the session (run ids with a `/`) are skipped: the
 * sub-agent published them live, while it ran.
 */
export class EventRecorder {
  /** Runs seen so far (a run's first write is its start). */
  private readonly seenRuns = new Set<string>()
  /** Runs whose end was reported and that have not run again since: a record's next write is compared with these. */
  private readonly endedRuns = new Set<string>()
  private readonly turnIds = new Set<string>()
  private readonly toolNames = new Map<string, string>()
  private readonly openTurns: Array<{ runId: string; turnId: string; text: string; calls: Set<string> }> = []

  constructor(private readonly identity: RecorderIdentity) {}

  /**
   * Learns what the session held before this invocation wrote anything (its loaded window). It keeps run statuses,
   * turn ids and open tool calls, never a copy of the data: opening a long session stays cheap.
   */
  seed(data: { readonly runs: readonly SessionRun[]; readonly turns: readonly SessionTurn[] } | null): void {
    if (!data) return
    for (const run of data.runs) this.noteRun(run)
    for (const turn of data.turns) this.trackTurn(turn, undefined)
  }

  /**
   * Follows a header write without building its events: what {@link EventRecorder.runEvents} learns, for a writer
   * nobody listens to right now (a later write is then reported as if the events had been taken).
   */
  noteRuns(meta: SessionMeta): void {
    for (const run of meta.runs) this.noteRun(run)
  }

  /** Follows appended turns without building their events: what {@link EventRecorder.turnEvents} learns. */
  noteTurns(turns: readonly SessionTurn[]): void {
    for (const turn of turns) if (!this.turnIds.has(turn.id)) this.trackTurn(turn, undefined)
  }

  /**
   * Events of a run record's change: a new run starts; a run ends once it is written with an end time and a status
   * other than `running`, whatever it passed through on the way (a cancelled run is first marked `interrupted` by the
   * heal of its open calls, then `cancelled` with its end time). A run that runs again can end again.
   */
  runEvents(meta: SessionMeta): NewSessionEvent[] {
    const events: NewSessionEvent[] = []
    for (const run of meta.runs) {
      const started = !this.seenRuns.has(run.id)
      const ended = !this.endedRuns.has(run.id) && isEnded(run)
      this.noteRun(run)
      if (run.id.includes('/') || run.depth !== this.identity.depth) continue
      if (started) events.push(this.startEvent(run))
      if (ended) events.push(this.endEvent(run))
    }
    return events
  }

  private noteRun(run: SessionRun): void {
    this.seenRuns.add(run.id)
    if (isEnded(run)) this.endedRuns.add(run.id)
    else if (run.status === 'running') this.endedRuns.delete(run.id)
  }

  /** Events of appended turns: tool calls, questions, results, steering, finished model turns. */
  turnEvents(turns: readonly SessionTurn[]): NewSessionEvent[] {
    const events: NewSessionEvent[] = []
    for (const turn of turns) {
      if (this.turnIds.has(turn.id)) continue
      this.trackTurn(turn, turn.runId.includes('/') ? undefined : events)
    }
    return events
  }

  /** Learns what `turn` changes (ids, tool names, open model turns) and, given `events`, adds the events it makes. */
  private trackTurn(turn: SessionTurn, events: NewSessionEvent[] | undefined): void {
    this.turnIds.add(turn.id)
    const at = turn.createdAt
    if (events && turn.role === 'user' && turn.id.endsWith('-s')) events.push({ type: 'steer', at, data: { ...this.base(turn.runId), turnId: turn.id, text: cut(textOf(turn)) } })
    for (const block of turn.content) {
      if (block.type === 'tool_use') {
        this.toolNames.set(block.id, block.name)
        if (events) this.callEvents(turn, block, events)
      } else if (block.type === 'tool_result') {
        events?.push({ type: 'tool:end', at, data: { ...this.base(turn.runId), turnId: turn.id, callId: block.toolUseId, name: this.toolNames.get(block.toolUseId) ?? '', isError: block.isError === true, output: cut(resultText(block.content)) } })
        this.closeCall(block.toolUseId, at, events)
      }
    }
    if (turn.role === 'assistant') this.openTurn(turn, events)
  }

  private callEvents(turn: SessionTurn, block: ToolUseBlock, events: NewSessionEvent[]): void {
    const { createdAt: at } = turn
    const base = this.base(turn.runId)
    events.push({ type: 'tool:start', at, data: { ...base, turnId: turn.id, callId: block.id, name: block.name, input: cutJson(block.input) } })
    if (block.name === 'ask_user' || block.name === 'present_plan') events.push({ type: 'question', at, data: { ...base, callId: block.id, kind: block.name, question: cut(String(block.input.question ?? block.input.plan ?? '')) } })
  }

  private openTurn(turn: SessionTurn, events: NewSessionEvent[] | undefined): void {
    const calls = new Set<string>()
    for (const block of turn.content) if (block.type === 'tool_use') calls.add(block.id)
    if (calls.size > 0) this.openTurns.push({ runId: turn.runId, turnId: turn.id, text: textOf(turn), calls })
    else events?.push(this.turnEnd(turn.runId, turn.id, textOf(turn), turn.createdAt))
  }

  private closeCall(callId: string, at: number, events: NewSessionEvent[] | undefined): void {
    const index = this.openTurns.findIndex(open => open.calls.has(callId))
    const open = this.openTurns[index]
    if (!open) return
    open.calls.delete(callId)
    if (open.calls.size > 0) return
    this.openTurns.splice(index, 1)
    events?.push(this.turnEnd(open.runId, open.turnId, open.text, at))
  }

  /** `turn:end` carries the turn's whole text: it is authoritative over the live deltas a viewer saw. */
  private turnEnd(runId: string, turnId: string, text: string, at: number): NewSessionEvent {
    const whole = text.length <= TURN_TEXT_LIMIT
    return { type: 'turn:end', at, data: { ...this.base(runId), turnId, text: whole ? text : text.slice(0, TURN_TEXT_LIMIT), ...(whole ? {} : { textTruncated: true }) } }
  }

  private startEvent(run: SessionRun): NewSessionEvent {
    const { label } = this.identity
    if (label !== undefined) return { type: 'child:start', at: run.startedAt, data: { ...this.base(run.id), task: cut(run.prompt) } }
    return { type: 'run:start', at: run.startedAt, data: { runId: run.id, prompt: cut(run.prompt) } }
  }

  private endEvent(run: SessionRun): NewSessionEvent {
    const at = run.endedAt ?? run.startedAt
    const { label } = this.identity
    const totals = run.totals ? { totals: run.totals } : {}
    if (label !== undefined) return { type: 'child:end', at, data: { ...this.base(run.id), status: run.status, ...totals } }
    return { type: 'run:end', at, data: { runId: run.id, status: run.status, text: cut(run.text ?? ''), ...(run.error ? { error: cut(run.error) } : {}), ...totals } }
  }

  private base(runId: string): Record<string, unknown> {
    const { label, depth, parentRunId, parentCallId } = this.identity
    if (label === undefined) return { runId }
    return { runId, label, depth, ...(parentRunId === undefined ? {} : { parentRunId }), ...(parentCallId === undefined ? {} : { parentCallId }) }
  }
}

/**
 * A `SessionStore` that writes through `inner` and hands the events of each write to `publish`, after the write.
 * `publish` must be replay-stable (a journaled one-way call): the recorder derives the same batches on every replay.
 */
export function recordingSessionStore(inner: SessionStore, recorder: EventRecorder, publish: (events: NewSessionEvent[]) => void): SessionStore {
  const emit = (events: NewSessionEvent[]): void => { if (events.length > 0) publish(events) }
  return {
    async load(sessionId) {
      const data = await inner.load(sessionId)
      recorder.seed(data)
      return data
    },
    async save(session) {
      await inner.save(session)
      emit([...recorder.runEvents(session), ...recorder.turnEvents(session.turns)])
    },
    async appendTurns(sessionId, turns) {
      await inner.appendTurns(sessionId, turns)
      emit(recorder.turnEvents(turns))
    },
    async saveMeta(sessionId, meta) {
      await inner.saveMeta(sessionId, meta)
      emit(recorder.runEvents(meta))
    },
    updateStatus: (sessionId, status) => inner.updateStatus(sessionId, status),
    list: () => inner.list(),
  }
}

/** Whether a run record says the run ended: a status other than `running`, and an end time. */
function isEnded(run: SessionRun): boolean {
  return run.status !== 'running' && run.endedAt !== undefined
}

function textOf(turn: SessionTurn): string {
  return turn.content.map(block => (block.type === 'text' ? block.text : '')).join('')
}

/** A tool result as text: its text blocks joined, each image named by its media type. */
function resultText(content: string | ReadonlyArray<{ type: string; text?: string; mediaType?: string }>): string {
  if (typeof content === 'string') return content
  return content.map(block => (block.type === 'text' ? (block.text ?? '') : `[${block.mediaType ?? 'image'}]`)).join('')
}

function cut(text: string): string {
  return text.length <= EVENT_TEXT_LIMIT ? text : `${text.slice(0, EVENT_TEXT_LIMIT)}…`
}

/** A tool input as it is, or cut to a readable preview when its JSON is long. */
function cutJson(value: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(value)
  return json.length <= EVENT_TEXT_LIMIT ? value : { preview: `${json.slice(0, EVENT_TEXT_LIMIT)}…`, truncated: true }
}
