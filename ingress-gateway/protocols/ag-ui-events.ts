import { EventType, type Event as AgUiEvent, type Interrupt, type RunFinishedOutcome, type TokenUsage } from '@ag-ui/core'
import { interruptOf } from './ag-ui-interrupts'
import type { RunEndItem, RunTotals, TimelineItem } from './timeline-items'

/** Any AG-UI event (`@ag-ui/core`'s `Event`). */
export type { AgUiEvent }

/** Which AG-UI run a mapping produces, and which timeline run it follows. */
export interface AgUiMappingOptions {
  /** The AG-UI thread: the session id. */
  threadId: string
  /** The AG-UI run id: the `runId` of the client's `RunAgentInput`. */
  runId: string
  /** The timeline run to map; when absent, the first `run-start` that matches {@link prompt} (or any, without one). */
  timelineRunId?: string
  /** The prompt whose `run-start` to lock on when {@link timelineRunId} is absent. */
  prompt?: string
  /** Forward sub-agent events (`SUBAGENT_*`, their activity as `CUSTOM` events) attributed with their run id. */
  subagents?: boolean
  /** Questions already answered by this request's resume: never raised again as interrupts. */
  answeredQuestionIds?: ReadonlySet<string>
  /**
   * What the client already holds (the snapshot sent before a continuation): the text of these steps and these tool
   * calls and results are not sent again when the run is replayed from its start.
   */
  journaled?: { steps: ReadonlySet<number>; calls: ReadonlySet<string>; results: ReadonlySet<string> }
}

/** Statuses of `run-end` that finish the AG-UI run as a success (`limit`: the run stopped at its turn cap, on purpose). */
const SUCCESS_STATUSES = new Set(['completed', 'limit'])
/** Statuses of `run-end` that finish it as cancelled. */
const CANCELLED_STATUSES = new Set(['cancelled', 'aborted'])

/**
 * Maps the {@link TimelineItem}s of one top-level run to AG-UI events, item by item, in a sequence `@ag-ui/client`'s
 * verifier accepts (steps, messages, tool calls and sub-agents all closed before the run ends). The caller sends
 * `RUN_STARTED` and the snapshot itself ({@link runStartedEvent}); {@link AgUiMapping.finished} says the AG-UI run
 * ended (`RUN_FINISHED` with a success, cancelled or interrupt outcome, or `RUN_ERROR`), after which nothing more is
 * produced. A question ends the AG-UI run with an interrupt; the timeline run goes on waiting for its answer.
 *
 * Message ids: the text of step `n` is message `<runId>:<n>`; a `step-reset` ends it and the text sent again after it
 * goes to a new message `<runId>:<n>.<k>` (AG-UI cannot take text back, and reopening an ended id is refused by the
 * client's verifier; the client's next `MESSAGES_SNAPSHOT` restores the journaled text). Tool calls and results are
 * sent once per call id, even when a reset sends them again.
 */
export class AgUiMapping {
  private timelineRunId: string | undefined
  private ended = false
  private step: number | undefined
  private segment = 0
  private textOpen: string | undefined
  private reasoningOpen: string | undefined
  private readonly sentCalls = new Set<string>()
  private readonly sentResults = new Set<string>()
  private readonly children = new Set<string>()
  /** Sub-agents that ended in this AG-UI run: the client's verifier refuses a reused sub-agent run id. */
  private readonly endedChildren = new Set<string>()

  constructor(private readonly options: AgUiMappingOptions) {
    this.timelineRunId = options.timelineRunId
  }

  /** Whether the AG-UI run has ended (its last event was produced). */
  get finished(): boolean {
    return this.ended
  }

  /** The timeline run being mapped (undefined until its `run-start` when none was given). */
  get followedRunId(): string | undefined {
    return this.timelineRunId
  }

  /** The AG-UI events of `item` (none for items of other runs, or after the run ended). */
  map(item: TimelineItem): AgUiEvent[] {
    if (this.ended) return []
    if (item.type === 'source-error') return [{ type: EventType.CUSTOM, name: 'zidane.source-error', value: { code: item.code, message: item.message } }]
    if (item.type === 'run-start') {
      if (this.timelineRunId === undefined && (this.options.prompt === undefined || samePrompt(item.prompt, this.options.prompt))) this.timelineRunId = item.runId
      return []
    }
    if (item.runId !== this.timelineRunId || this.isJournaled(item)) return []
    return this.mapOwn(item)
  }

  private isJournaled(item: TimelineItem): boolean {
    const journaled = this.options.journaled
    if (journaled === undefined) return false
    if (item.type === 'text-delta' || item.type === 'reasoning-delta' || item.type === 'step-start') return journaled.steps.has(item.step)
    // A journaled step that sends something new (a tool result) is opened, and closed by its end; others stay silent.
    if (item.type === 'step-end' || item.type === 'step-reset') return journaled.steps.has(item.step) && this.step !== item.step
    if (item.type === 'tool-call') return journaled.calls.has(item.callId)
    if (item.type === 'tool-result') return journaled.results.has(item.callId)
    return false
  }

  private mapOwn(item: Exclude<TimelineItem, { type: 'source-error' | 'run-start' }>): AgUiEvent[] {
    switch (item.type) {
      case 'step-start': return this.enterStep(item.step)
      case 'text-delta': return [...this.enterStep(item.step), ...this.closeReasoning(), ...this.openText(), { type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.messageId(), delta: item.delta }]
      case 'reasoning-delta': return [...this.enterStep(item.step), ...this.openReasoning(), { type: EventType.REASONING_MESSAGE_CONTENT, messageId: this.reasoningId(), delta: item.delta }]
      case 'step-reset': return this.reset(item.step)
      case 'tool-call': return this.toolCall(item)
      case 'tool-result': return this.toolResult(item)
      case 'step-end': return [...this.enterStep(item.step), ...this.closeStep()]
      case 'question': return this.question(item.question)
      case 'steer': return this.steer(item.turnId, item.text)
      case 'child-start': case 'child-activity': case 'child-end': return this.options.subagents === true ? this.child(item) : []
      case 'run-end': return this.runEnd(item)
    }
  }

  private messageId(): string {
    return `${String(this.timelineRunId)}:${String(this.step)}${this.segment === 0 ? '' : `.${this.segment}`}`
  }

  private reasoningId(): string {
    return `${this.messageId()}:reasoning`
  }

  /** Starts `step` unless it is the open one: a continuation (after a resume) may begin mid-step. */
  private enterStep(step: number): AgUiEvent[] {
    if (this.step === step) return []
    const closing = this.step === undefined ? [] : this.closeStep()
    this.step = step
    this.segment = 0
    return [...closing, { type: EventType.STEP_STARTED, stepName: `step-${step}` }]
  }

  private closeStep(): AgUiEvent[] {
    if (this.step === undefined) return []
    const closing = [...this.closeReasoning(), ...this.closeText(), { type: EventType.STEP_FINISHED, stepName: `step-${this.step}` } as const]
    this.step = undefined
    return closing
  }

  private openText(): AgUiEvent[] {
    if (this.textOpen !== undefined) return []
    this.textOpen = this.messageId()
    return [{ type: EventType.TEXT_MESSAGE_START, messageId: this.textOpen, role: 'assistant' }]
  }

  private closeText(): AgUiEvent[] {
    if (this.textOpen === undefined) return []
    const messageId = this.textOpen
    this.textOpen = undefined
    // A later text of the same step (after a tool call) is a message of its own: an ended id cannot be reopened.
    this.segment += 1
    return [{ type: EventType.TEXT_MESSAGE_END, messageId }]
  }

  private openReasoning(): AgUiEvent[] {
    if (this.reasoningOpen !== undefined) return []
    this.reasoningOpen = this.reasoningId()
    return [{ type: EventType.REASONING_START, messageId: this.reasoningOpen }, { type: EventType.REASONING_MESSAGE_START, messageId: this.reasoningOpen, role: 'reasoning' }]
  }

  private closeReasoning(): AgUiEvent[] {
    if (this.reasoningOpen === undefined) return []
    const messageId = this.reasoningOpen
    this.reasoningOpen = undefined
    return [{ type: EventType.REASONING_MESSAGE_END, messageId }, { type: EventType.REASONING_END, messageId }]
  }

  private reset(step: number): AgUiEvent[] {
    const entering = this.enterStep(step)
    const closing = [...this.closeReasoning(), ...this.closeText()]
    if (closing.length === 0) this.segment += 1
    return [...entering, ...closing]
  }

  private toolCall(item: Extract<TimelineItem, { type: 'tool-call' }>): AgUiEvent[] {
    const entering = this.enterStep(item.step)
    if (this.sentCalls.has(item.callId)) return entering
    this.sentCalls.add(item.callId)
    const parentMessageId = this.textOpen ?? this.messageId()
    return [
      ...entering, ...this.closeReasoning(), ...this.closeText(),
      { type: EventType.TOOL_CALL_START, toolCallId: item.callId, toolCallName: item.name, parentMessageId },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: item.callId, delta: JSON.stringify(item.input) },
      { type: EventType.TOOL_CALL_END, toolCallId: item.callId },
    ]
  }

  private toolResult(item: Extract<TimelineItem, { type: 'tool-result' }>): AgUiEvent[] {
    const entering = this.enterStep(item.step)
    if (this.sentResults.has(item.callId)) return entering
    this.sentResults.add(item.callId)
    const result: AgUiEvent = { type: EventType.TOOL_CALL_RESULT, messageId: `${item.callId}:result`, toolCallId: item.callId, content: item.output, role: 'tool', ...(item.isError ? { metadata: { isError: true } } : {}) }
    return [...entering, ...this.closeReasoning(), ...this.closeText(), result]
  }

  private steer(turnId: string, text: string): AgUiEvent[] {
    return [
      ...this.closeReasoning(), ...this.closeText(),
      { type: EventType.TEXT_MESSAGE_START, messageId: turnId, role: 'user' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: turnId, delta: text },
      { type: EventType.TEXT_MESSAGE_END, messageId: turnId },
    ]
  }

  private question(question: Extract<TimelineItem, { type: 'question' }>['question']): AgUiEvent[] {
    if (this.options.answeredQuestionIds?.has(question.id) === true) return []
    return this.finish({ type: 'interrupt', interrupts: [interruptOf(question)] as [Interrupt, ...Interrupt[]] })
  }

  private child(item: Extract<TimelineItem, { type: 'child-start' | 'child-activity' | 'child-end' }>): AgUiEvent[] {
    const subagentRunId = item.childRunId
    if (this.endedChildren.has(subagentRunId)) return []
    const starting: AgUiEvent[] = this.children.has(subagentRunId) ? [] : [{ type: EventType.SUBAGENT_STARTED, subagentRunId, name: item.label, ...(item.type === 'child-start' ? { description: item.task } : {}), ...(item.parentCallId === undefined ? {} : { parentToolCallId: item.parentCallId }) }]
    this.children.add(subagentRunId)
    if (item.type === 'child-start') return starting
    if (item.type === 'child-activity') return [...starting, { type: EventType.CUSTOM, subagentRunId, name: `zidane.child.${item.event}`, value: item.data }]
    this.children.delete(subagentRunId)
    this.endedChildren.add(subagentRunId)
    const closing: AgUiEvent = SUCCESS_STATUSES.has(item.status)
      ? { type: EventType.SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'success' } }
      : { type: EventType.SUBAGENT_ERROR, subagentRunId, message: `the sub-agent ended ${item.status}`, code: item.status }
    return [...starting, closing]
  }

  private runEnd(item: RunEndItem): AgUiEvent[] {
    if (SUCCESS_STATUSES.has(item.status)) return this.finish({ type: 'success' }, item.text, item.totals)
    if (CANCELLED_STATUSES.has(item.status)) return this.finish({ type: 'cancelled' }, undefined, item.totals)
    const closing = this.closeAll('error')
    this.ended = true
    const usage = usageOf(item.totals)
    return [...closing, { type: EventType.RUN_ERROR, message: item.error ?? `the run ended ${item.status}`, code: `run_${item.status}`, ...(usage === undefined ? {} : { usage }) }]
  }

  private finish(outcome: RunFinishedOutcome, result?: string, totals?: RunTotals): AgUiEvent[] {
    const closing = this.closeAll(outcome.type === 'interrupt' ? 'suspended' : 'error')
    this.ended = true
    const usage = usageOf(totals)
    return [...closing, { type: EventType.RUN_FINISHED, threadId: this.options.threadId, runId: this.options.runId, outcome, ...(result === undefined ? {} : { result }), ...(usage === undefined ? {} : { usage }) }]
  }

  /** Closes what is open: the client's verifier refuses a run that ends with an open step, message, call or sub-agent. */
  private closeAll(children: 'suspended' | 'error'): AgUiEvent[] {
    const closing = [...this.closeStep()]
    for (const subagentRunId of this.children) {
      closing.push(children === 'suspended' ? { type: EventType.SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'suspended' } } : { type: EventType.SUBAGENT_ERROR, subagentRunId, message: 'the run ended before the sub-agent', code: 'run_ended' })
    }
    this.children.clear()
    return closing
  }
}

/** Whether a `run-start`'s prompt is `prompt`: the event log cuts a long one (then ending with `…`). */
function samePrompt(logged: string, prompt: string): boolean {
  return logged === prompt || (logged.endsWith('…') && prompt.length >= logged.length && prompt.startsWith(logged.slice(0, -1)))
}

/** `RUN_STARTED` of an AG-UI run on thread `threadId` (the session id). */
export function runStartedEvent(threadId: string, runId: string): AgUiEvent {
  return { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: '1.0' }
}

/** A run's totals as AG-UI token usage (inputs count cache reads and writes, as the protocol's totals do). */
export function usageOf(totals: RunTotals | undefined): TokenUsage[] | undefined {
  const usage = totals?.usage
  if (usage === undefined) return undefined
  const cacheRead = usage.cacheReadTokens ?? 0
  const cacheWrite = usage.cacheWriteTokens ?? 0
  const inputTokens = (usage.inputTokens ?? 0) + cacheRead + cacheWrite
  const outputTokens = usage.outputTokens ?? 0
  return [{ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cachedInputTokens: cacheRead, cacheWriteInputTokens: cacheWrite }]
}
