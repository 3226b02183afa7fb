import type { PendingQuestion } from '../../contract/session'

/**
 * The protocol-neutral view of a session's activity that both chat protocols (the AI SDK UI message stream and AG-UI)
 * are thin mappings of. It is built by {@link import('./run-timeline').RunTimeline} from the three sources the gateway
 * already has, never a second store: the durable event log (tool calls and results, finished steps, runs, sub-agents,
 * steering), the live deltas (text and reasoning while a model step streams) and the session's pending questions
 * (the awakeable ids of questions and approvals, with their answer links).
 *
 * Order guarantees, per top-level run:
 * - `run-start` comes first and `run-end` last;
 * - a model step is `step-start`, then its `text-delta`/`reasoning-delta`s, its `tool-call`s and `tool-result`s, then
 *   `step-end`; steps never overlap (the deltas of the next step wait for the durable end of the one before);
 * - `step-reset` voids every item of the current step since its `step-start` (a model step made again after a crash
 *   or a retry, or live text that does not match the journaled text): the items that are still true are sent again
 *   after it, so a client that drops the step's parts on `step-reset` ends with exactly the journaled step;
 * - the text a step's `text-delta`s spell (after its last `step-reset`) equals the journaled turn text byte for byte
 *   by the time its `step-end` arrives.
 */
export type TimelineItem =
  | RunStartItem
  | StepStartItem
  | TextDeltaItem
  | ReasoningDeltaItem
  | StepResetItem
  | ToolCallItem
  | ToolResultItem
  | StepEndItem
  | QuestionItem
  | SteerItem
  | ChildStartItem
  | ChildActivityItem
  | ChildEndItem
  | RunEndItem
  | SourceErrorItem

/** A top-level run of the session began (its prompt is the user's message). `seq` is the durable event's. */
export interface RunStartItem { type: 'run-start'; runId: string; prompt: string; seq: number }

/** A model step of a top-level run began. `step` is the run's turn number (as in its turn ids `<run>-t<n>-a`, from 0). */
export interface StepStartItem { type: 'step-start'; runId: string; step: number }

/** More of the step's visible text. */
export interface TextDeltaItem { type: 'text-delta'; runId: string; step: number; delta: string }

/** More of the step's reasoning (thinking) text; live only: the journal keeps no reasoning text for viewers. */
export interface ReasoningDeltaItem { type: 'reasoning-delta'; runId: string; step: number; delta: string }

/** Everything the current step sent since its `step-start` is void; what is still true follows. */
export interface StepResetItem { type: 'step-reset'; runId: string; step: number; reason: 'superseded' | 'journaled-text' }

/** The model called a tool (the assistant turn holding the call is journaled). `input` may be a cut preview. */
export interface ToolCallItem { type: 'tool-call'; runId: string; step: number; callId: string; name: string; input: Record<string, unknown> }

/** A tool call ended: its output text (cut to the event log's limit) and whether it is an error. */
export interface ToolResultItem { type: 'tool-result'; runId: string; step: number; callId: string; name: string; output: string; isError: boolean }

/** The step ended (its calls all closed); `text` is the journaled text of the turn, authoritative. */
export interface StepEndItem { type: 'step-end'; runId: string; step: number; text: string; textTruncated: boolean }

/**
 * A question or approval the run waits on, as the session lists it (with `callId` of the call it belongs to when
 * known) and the link that answers it without an API key. Sent once per question id.
 */
export interface QuestionItem { type: 'question'; runId: string; question: PendingQuestion & { answerUrl: string } }

/** A steering message reached the run (journaled as a user turn). */
export interface SteerItem { type: 'steer'; runId: string; turnId: string; text: string }

/**
 * A sub-agent of the run started. `childRunId` is the sub-agent's own run id, `parentCallId` the `spawn` call that
 * started it (when the services recorded it). Sub-agents' items may follow their run's `run-end`: their events reach
 * the log from the sub-agents' own invocations.
 */
export interface ChildStartItem { type: 'child-start'; runId: string; childRunId: string; label: string; depth: number; task: string; parentCallId?: string }

/** Something a sub-agent did (a tool call or result, a finished step), for progress displays. */
export interface ChildActivityItem { type: 'child-activity'; runId: string; childRunId: string; label: string; depth: number; parentCallId?: string; event: 'tool:start' | 'tool:end' | 'turn:end'; data: Record<string, unknown> }

/** A sub-agent ended. */
export interface ChildEndItem { type: 'child-end'; runId: string; childRunId: string; label: string; depth: number; parentCallId?: string; status: string; totals?: RunTotals }

/** The run ended: `completed`, `failed`, `cancelled`, `interrupted`, …, with its text and, when recorded, its totals. */
export interface RunEndItem { type: 'run-end'; runId: string; status: string; text: string; error?: string; totals?: RunTotals; seq: number }

/** Restate could not be read (once per outage; the timeline keeps retrying). */
export interface SourceErrorItem { type: 'source-error'; code: string; message: string }

/** A run's usage and cost, as its run record totals them (sub-agents included). */
export interface RunTotals {
  usage?: { inputTokens?: number; outputTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number }
  costUsd?: number
  [key: string]: unknown
}
