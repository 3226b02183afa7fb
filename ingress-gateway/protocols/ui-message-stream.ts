import type { FinishReason, UIMessageChunk } from 'ai'
import { approvalInput, questionChunk, subagentData, type DataChunk, type SubagentData } from './ui-message-data'
import type { QuestionItem, RunEndItem, StepEndItem, TimelineItem, ToolCallItem, ToolResultItem } from './timeline-items'

/** What one AI SDK UI message stream shows: one top-level run of the session, as one assistant message. */
export interface UiMessageStreamOptions {
  /** The run whose items become chunks; items of other runs are skipped. */
  runId: string
  /** The assistant message's id (`start.messageId`). */
  messageId: string
  /**
   * The client already holds this message (an approval's continuation): a tool result whose call this stream did not
   * send updates the client's tool part instead of adding one.
   */
  continues?: boolean
  /** Approval ids this stream must not ask again (just answered: the session may list them a moment longer). */
  answeredApprovals?: ReadonlySet<string>
  /**
   * The items replay the run from its start, but the client holds it up to a point: until that point the items only
   * build the state and send nothing (questions wait for it). The point is the result of one of `toolResults` (the
   * calls just approved or denied: the run's end, if it comes first), or the `steer` item carrying `steerText` (this
   * message starts after it; a run that ends first leaves the message to the run it starts: {@link missedResumePoint}).
   */
  resumeAt?: ResumePoint | undefined
}

/** Where a stream that replays its run starts sending: see {@link UiMessageStreamOptions.resumeAt}. */
export type ResumePoint = { toolResults: ReadonlySet<string> } | { steerText: string }

/** How much of a steering message's start identifies it among the steer items (their text may be cut or joined). */
const STEER_MATCH_CHARS = 200

/**
 * Maps the {@link TimelineItem}s of one top-level run to AI SDK `UIMessageChunk`s (`useChat`'s UI message stream
 * protocol v1): a pure, synchronous state machine the route feeds. {@link start} gives the opening chunks; each
 * {@link map} the chunks of one item; once {@link ended} (the run ended, or it waits for an approval) it maps nothing.
 */
export class UiMessageStreamMapper {
  private started = false
  private finished = false
  /** The step this stream opened (`start-step` sent), if one is open. */
  private step: number | undefined
  /** The id of the step's open text part, and of its open reasoning part. */
  private text: string | undefined
  private reasoning: string | undefined
  /** Whether this stream saw the open step's `step-start` (else it joined the step midway and lacks its start). */
  private stepFromStart = false
  /** How many text and reasoning parts the open step has had (the ids of later ones get a suffix). */
  private partCount = 0
  /** Text the step's deltas spelled since its start or last reset (across parts cut by tool calls). */
  private stepText = ''
  private readonly toolCalls = new Set<string>()
  private readonly subagents = new Map<string, SubagentData>()
  /** The data parts sent during the open step: a `reset-step` drops them on the client, so they are sent again. */
  private readonly stepDataParts = new Map<string, UIMessageChunk>()
  /** Set until the replay reaches the point the client holds (see {@link UiMessageStreamOptions.resumeAt}). */
  private resumeAt: ResumePoint | undefined
  private readonly heldQuestions: QuestionItem[] = []
  /** While replaying: the items of the open step, which belong to the new message when the steer starts that step. */
  private replayedStepItems: Array<Exclude<TimelineItem, { type: 'source-error' }>> = []
  private missed = false

  constructor(private readonly options: UiMessageStreamOptions) {
    this.resumeAt = options.resumeAt
  }

  /** Whether the run ended before the steer item it waited for: the steering message starts a run of its own. */
  get missedResumePoint(): boolean {
    return this.missed
  }

  /** Whether the stream is over: `finish` or `abort` was mapped. */
  get ended(): boolean {
    return this.finished
  }

  /** The opening chunk (`start` with the message id); empty when already sent. */
  start(): UIMessageChunk[] {
    if (this.started) return []
    this.started = true
    return [{ type: 'start', messageId: this.options.messageId }]
  }

  /** The chunks of `item` (none for another run's item, or once ended). */
  map(item: TimelineItem): UIMessageChunk[] {
    if (this.finished) return []
    if (item.type === 'source-error') return [{ type: 'data-gateway-error', data: { code: item.code, message: item.message }, transient: true }]
    if (item.runId !== this.options.runId) return []
    if (this.resumeAt !== undefined) return [...this.start(), ...this.replayed(item)]
    return [...this.start(), ...this.mapOwn(item)]
  }

  /** An item of the replay before the resume point: state only. At the point, what follows it, then the held questions. */
  private replayed(item: Exclude<TimelineItem, { type: 'source-error' }>): UIMessageChunk[] {
    if (item.type === 'question') {
      this.heldQuestions.push(item)
      return []
    }
    const point = this.resumeAt
    if (point !== undefined && 'steerText' in point && item.type === 'run-end') {
      this.missed = true
      this.finished = true
      return []
    }
    if (point === undefined || !isResumePoint(point, item)) {
      if (item.type === 'step-start') this.replayedStepItems = []
      if (item.type === 'step-end') this.replayedStepItems = []
      else this.replayedStepItems.push(item)
      this.mapOwn(item)
      return []
    }
    this.resumeAt = undefined
    let chunks: UIMessageChunk[]
    if ('steerText' in point && item.type === 'steer') {
      // The new message starts after the steer: nothing of the replayed state is the client's to close, and a question
      // held from before it was answered before the run could take the steering message (a run takes it at a turn start).
      this.text = undefined
      this.reasoning = undefined
      this.step = undefined
      this.heldQuestions.length = 0
      // The step the run made with the message may have streamed before the steer reached the log (live deltas come
      // first): it is this message's, from its start.
      const stepItems = this.replayedStepItems.filter(replayed => 'step' in replayed && replayed.step === steerTurn(item.turnId))
      this.replayedStepItems = []
      chunks = stepItems.flatMap(replayed => this.mapOwn(replayed))
    } else {
      chunks = this.mapOwn(item)
    }
    for (const question of this.heldQuestions.splice(0)) if (!this.finished) chunks.push(...this.mapOwn(question))
    return chunks
  }

  private mapOwn(item: Exclude<TimelineItem, { type: 'source-error' }>): UIMessageChunk[] {
    switch (item.type) {
      case 'run-start': return []
      case 'step-start': return [...this.closeStep(), ...this.openStep(item.step, true)]
      case 'text-delta': return this.textDelta(item.step, item.delta)
      case 'reasoning-delta': return this.reasoningDelta(item.step, item.delta)
      case 'step-reset': return this.resetStep()
      case 'tool-call': return this.toolCall(item)
      case 'tool-result': return this.toolResult(item)
      case 'step-end': return this.stepEnd(item)
      case 'question': return this.question(item)
      case 'steer': return [...this.closeParts(), { type: 'steering-message', id: item.turnId, parts: [{ type: 'text', text: item.text }] }]
      case 'child-start': case 'child-activity': case 'child-end': {
        const data = subagentData(this.subagents.get(item.childRunId), item)
        this.subagents.set(item.childRunId, data)
        return [this.dataPart({ type: 'data-subagent', id: item.childRunId, data })]
      }
      case 'run-end': return this.runEnd(item)
    }
  }

  private openStep(step: number, fromStart: boolean): UIMessageChunk[] {
    this.step = step
    this.stepFromStart = fromStart
    this.partCount = 0
    this.stepText = ''
    this.stepDataParts.clear()
    return [{ type: 'start-step' }]
  }

  /** Opens a step for an item of one when this stream has none open (it joined the run mid-step). */
  private ensureStep(step: number): UIMessageChunk[] {
    return this.step === undefined ? this.openStep(step, false) : []
  }

  private textDelta(step: number, delta: string): UIMessageChunk[] {
    const chunks = [...this.ensureStep(step)]
    if (this.reasoning !== undefined) chunks.push(...this.closeReasoning())
    if (this.text === undefined) {
      this.text = this.partId('text')
      chunks.push({ type: 'text-start', id: this.text })
    }
    this.stepText += delta
    chunks.push({ type: 'text-delta', id: this.text, delta })
    return chunks
  }

  private reasoningDelta(step: number, delta: string): UIMessageChunk[] {
    const chunks = [...this.ensureStep(step)]
    if (this.text !== undefined) chunks.push(...this.closeText())
    if (this.reasoning === undefined) {
      this.reasoning = this.partId('reasoning')
      chunks.push({ type: 'reasoning-start', id: this.reasoning })
    }
    chunks.push({ type: 'reasoning-delta', id: this.reasoning, delta })
    return chunks
  }

  /** `<runId>:<step>:text` for a step's first text part, `<runId>:<step>:text:<n>` for later ones. */
  private partId(kind: 'text' | 'reasoning'): string {
    this.partCount++
    const base = `${this.options.runId}:${this.step ?? 0}:${kind}`
    return this.partCount === 1 ? base : `${base}:${this.partCount}`
  }

  /**
   * The client drops the step's parts; the timeline sends again what is still true. Data parts (sub-agents, questions)
   * are sent again here too: they replace by id, so a second copy from the timeline changes nothing.
   */
  private resetStep(): UIMessageChunk[] {
    this.text = undefined
    this.reasoning = undefined
    this.partCount = 0
    this.stepText = ''
    // A step this stream did not open began in an earlier stream: resetting it would drop parts nobody sends again.
    if (this.step === undefined) return []
    return [{ type: 'reset-step' }, ...this.stepDataParts.values()]
  }

  private toolCall(item: ToolCallItem): UIMessageChunk[] {
    this.toolCalls.add(item.callId)
    return [...this.ensureStep(item.step), ...this.closeParts(), { type: 'tool-input-available', toolCallId: item.callId, toolName: item.name, input: item.input, dynamic: true }]
  }

  private toolResult(item: ToolResultItem): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [...this.closeParts()]
    // A result whose call the client cannot have: give it the call first (its input is not known here).
    if (!this.toolCalls.has(item.callId) && this.options.continues !== true) {
      this.toolCalls.add(item.callId)
      chunks.push(...this.ensureStep(item.step), { type: 'tool-input-available', toolCallId: item.callId, toolName: item.name, input: {}, dynamic: true })
    }
    if (item.isError) chunks.push({ type: 'tool-output-error', toolCallId: item.callId, errorText: item.output, dynamic: true })
    else chunks.push({ type: 'tool-output-available', toolCallId: item.callId, output: item.output, dynamic: true })
    return chunks
  }

  private stepEnd(item: StepEndItem): UIMessageChunk[] {
    // The journaled text is authoritative; the deltas spell it by now (timeline contract): send any missing tail, when
    // this stream saw the whole step (one that joined midway holds only its end).
    const missing = this.stepFromStart && item.text.startsWith(this.stepText) ? item.text.slice(this.stepText.length) : ''
    const chunks = missing === '' ? [] : this.textDelta(item.step, missing)
    return [...chunks, ...this.closeStep()]
  }

  private question(item: QuestionItem): UIMessageChunk[] {
    if (item.question.kind !== 'approval') return [this.dataPart(questionChunk(item))]
    if (this.options.answeredApprovals?.has(item.question.id) === true) return []
    const { id, callId, tool, input } = item.question
    const toolCallId = callId ?? id
    const chunks: UIMessageChunk[] = [...this.closeParts()]
    if (!this.toolCalls.has(toolCallId)) {
      this.toolCalls.add(toolCallId)
      chunks.push(...this.ensureStep(this.step ?? 0), { type: 'tool-input-available', toolCallId, toolName: tool ?? 'tool', input: approvalInput(input), dynamic: true })
    }
    // The client answers in its next request (`tool-approval-response`): this stream ends here.
    chunks.push({ type: 'tool-approval-request', approvalId: id, toolCallId }, ...this.closeStep())
    return [...chunks, ...this.finish({ type: 'finish', finishReason: 'tool-calls' })]
  }

  private runEnd(item: RunEndItem): UIMessageChunk[] {
    const metadata = { runId: item.runId, status: item.status, ...(item.totals?.usage === undefined ? {} : { usage: item.totals.usage }), ...(item.totals?.costUsd === undefined ? {} : { costUsd: item.totals.costUsd }) }
    const chunks: UIMessageChunk[] = [...this.closeStep(), { type: 'message-metadata', messageMetadata: metadata }]
    if (item.status === 'cancelled' || item.status === 'aborted') return [...chunks, ...this.finish({ type: 'abort', reason: item.status })]
    const reason = FINISH_REASONS[item.status]
    if (reason !== undefined) return [...chunks, ...this.finish({ type: 'finish', finishReason: reason })]
    chunks.push({ type: 'error', errorText: item.error ?? `the run ended ${item.status}` })
    return [...chunks, ...this.finish({ type: 'finish', finishReason: 'error' })]
  }

  private finish(chunk: UIMessageChunk): UIMessageChunk[] {
    this.finished = true
    return [chunk]
  }

  private dataPart(chunk: DataChunk): UIMessageChunk {
    if (this.step !== undefined) this.stepDataParts.set(`${chunk.type}:${chunk.id}`, chunk)
    return chunk
  }

  private closeText(): UIMessageChunk[] {
    const id = this.text
    if (id === undefined) return []
    this.text = undefined
    return [{ type: 'text-end', id }]
  }

  private closeReasoning(): UIMessageChunk[] {
    const id = this.reasoning
    if (id === undefined) return []
    this.reasoning = undefined
    return [{ type: 'reasoning-end', id }]
  }

  private closeParts(): UIMessageChunk[] {
    return [...this.closeReasoning(), ...this.closeText()]
  }

  /** Closes the open parts and the step this stream opened (`finish-step`). */
  private closeStep(): UIMessageChunk[] {
    const chunks = this.closeParts()
    if (this.step === undefined) return chunks
    this.step = undefined
    this.stepDataParts.clear()
    return [...chunks, { type: 'finish-step' }]
  }
}

/** The turn a steering message joined (its turn id is `<run>-t<n>-s`: the model sees it in turn n), if the id says. */
function steerTurn(turnId: string): number | undefined {
  const match = /-t(\d+)-s$/.exec(turnId)
  return match ? Number(match[1]) : undefined
}

function isResumePoint(point: ResumePoint, item: TimelineItem): boolean {
  if ('toolResults' in point) return item.type === 'run-end' || (item.type === 'tool-result' && point.toolResults.has(item.callId))
  return item.type === 'steer' && carriesSteering(item.text, point.steerText)
}

/** Whether `text` (a steer item's, or a run's prompt: cut, or several messages joined) carries the steering message. */
export function carriesSteering(text: string, steerText: string): boolean {
  return text.includes(steerText.slice(0, STEER_MATCH_CHARS))
}

/** How a run that ended neither cancelled nor in error finishes its message; any other status is an error. */
const FINISH_REASONS: Partial<Record<string, FinishReason>> = { completed: 'stop', limit: 'length', timeout: 'length', suspended: 'other' }
