import type { AgentStats } from 'zidane'
import type { ChildRunRequest } from 'zidane/restate'
import type { SessionRun, SessionStatus, SessionTurn, RunTotals } from 'zidane/session'

/**
 * The durable names of our Restate services and the shapes their handlers exchange. These names are permanent:
 * they are in every journal. The gateway imports only this file (types and names), never the handlers.
 */
export const SESSION_SERVICE = 'session'
/** Name of the child-runner service (one invocation per sub-agent). Durable: never rename. */
export const CHILD_SERVICE = 'child'
/** Name of the resumer virtual object (one key per awakeable id). Durable: never rename. */
export const RESUMER_SERVICE = 'resumer'
/** Name of the per-session steering inbox virtual object (key `<tenant>~<sessionId>`, as the session's). Durable: never rename. */
export const INBOX_SERVICE = 'inbox'
/**
 * State key of the inbox object's armed signal: the awakeable id a running run handed to `watch`, set while no
 * message has resolved it. Durable: never rename.
 */
export const INBOX_WATCHER_STATE_KEY = 'watcher'
/** State key of the session object's current run invocation (a {@link CurrentInvocation}). Durable: never rename. */
export const CURRENT_INVOCATION_STATE_KEY = 'current_invocation'
/** State key of the resumer's one record per question (a {@link StoredQuestion}). Durable: never rename. */
export const QUESTION_STATE_KEY = 'question'

/**
 * A prompt's own tool policy, on top of the operator's (`ZIDANE_APPROVE_TOOLS`, `ZIDANE_DENY_TOOLS`): it can only
 * add approvals and denials, never lift the operator's.
 */
export interface PromptToolPolicy {
  /** Tools whose every call waits for a person's approval in this run. */
  approve?: string[]
  /** Tools refused in this run (the model gets an error result). */
  deny?: string[]
}

/** Input of `session/<key>/run` (exclusive). The key is `<tenant>~<sessionId>`, built by the gateway. */
export interface SessionRunRequest {
  prompt: string
  model?: string
  maxTurns?: number
  policy?: PromptToolPolicy
}

/** The name of the sub-agent tool (`restateSpawnTool`): the operator's tool selection names it so. */
export const SPAWN_TOOL = 'spawn'

/**
 * Input of the child runner's `run`: the library's request, with the settings the root run journaled (every level hands
 * them to the next) and the prompt's own tool policy of the run tree.
 */
export interface ServicesChildRunRequest extends ChildRunRequest {
  settings: RunSettings
  /** The prompt's own tool policy of the run tree: it holds in the sub-agents too. */
  policy?: PromptToolPolicy
}

/** Output of `session/<key>/run`. */
export interface SessionRunResult {
  sessionId: string
  status: AgentStats['status']
  text: string
  stats: AgentStats
}

/** A question waiting for an answer, as `session/<key>/get` and `pending` report it. */
export interface PendingQuestion {
  id: string
  kind: 'ask_user' | 'present_plan' | 'approval'
  question: string
  options?: string[]
  createdAt: number
  expiresAt?: number
  /** The id of the tool call this question belongs to: the `ask_user`/`present_plan` call, or the call an approval is about. */
  callId?: string
  /** The tool an approval is about (kind `approval`). */
  tool?: string
  /** The input of that call as JSON text, cut to {@link APPROVAL_INPUT_PREVIEW_CHARS} characters. */
  input?: string
}

/** Longest tool input an approval shows in `pending` (JSON text; longer inputs are cut and end with `…`). */
export const APPROVAL_INPUT_PREVIEW_CHARS = 2_000

/** A message steered into a session, as the inbox keeps it until a run takes it. */
export interface InboxMessage {
  /** The id the gateway answered with: the Restate invocation id of the `inbox/<key>/add` call that saved it. */
  id: string
  text: string
  receivedAt: number
}

/** Input of `inbox/<key>/add`. */
export interface AddMessageRequest { text: string }

/** Input of `inbox/<key>/watch`: the awakeable to resolve once a message is waiting. */
export interface WatchInboxRequest { awakeableId: string }

/** Input of `inbox/<key>/take`: `forDelivery` when the session's `deliver` takes them (it then runs them as a prompt). */
export interface TakeMessagesRequest { forDelivery?: boolean }

/** What the session's run invocation is doing, recorded in state so the gateway can find and cancel it. */
export interface CurrentInvocation {
  invocationId: string
  status: 'running' | 'completed' | 'failed' | 'cancelled'
  startedAt: number
  endedAt?: number
  /** Why the invocation failed for good (`<code>: <message>`), when `status` is `failed`. */
  error?: string
}

/** Output of the shared handler `session/<key>/invocation` (null for a key that never ran): one state read, no session load. */
export type SessionInvocation = CurrentInvocation | null

/**
 * Output of the shared handler `session/<key>/get`: the header, usage, pending questions, one page of turns and the
 * latest run records. `exists` is false for a key that never ran.
 */
export interface SessionView {
  exists: boolean
  id: string
  status: SessionStatus | 'cancelled'
  createdAt?: number
  updatedAt?: number
  counts: { turns: number; runs: number }
  /** Totals of every run, sub-agents included in every counter. */
  usage: RunTotals
  pending: PendingQuestion[]
  /** Turns `page.from … page.to - 1` (0-based indexes in the session). */
  turns: SessionTurn[]
  page: { from: number; to: number; total: number; limit: number; nextTurnsAfter: number | null; previousTurnsAfter: number | null }
  /** The latest run records (at most 20), oldest first. */
  runs: SessionRun[]
  invocation?: CurrentInvocation
}

/** Input of `session/<key>/get`: the turns from index `turnsAfter` on (default: the newest page), at most `limit` (default 50, at most 200). */
export interface SessionViewRequest { turnsAfter?: number; limit?: number }

export type { SessionEvent } from './event-log'

/** Input of `resumer/<awakeableId>/register`, sent by the session object when it parks on a question. */
export interface RegisterQuestionRequest {
  sessionKey: string
  kind: PendingQuestion['kind']
  question: string
  options?: string[]
  createdAt: number
  expiresAt?: number
}

/** Input of `resumer/<awakeableId>/answer`. */
export interface AnswerRequest { answer: unknown }

/**
 * Why a question closed without an answer: its run ended (`finished`, `failed`, `cancelled`), or its deadline passed
 * while the run waited (`expired`).
 */
export type QuestionCloseReason = 'finished' | 'failed' | 'cancelled' | 'expired'

/** Input of `resumer/<awakeableId>/close`, sent by the session object when the question's run ends or stops waiting. */
export interface CloseQuestionRequest { reason: QuestionCloseReason }

/**
 * Output of `resumer/<awakeableId>/answer`: `answered`, or why not (the gateway maps these to 404 / 409 / 410).
 * `closed` carries the reason: the run the question belonged to is no longer waiting for it.
 */
export interface AnswerResult {
  outcome: 'answered' | 'unknown' | 'already_answered' | 'expired' | 'closed'
  sessionKey?: string
  reason?: QuestionCloseReason
}

/** The resumer's record of an open question (older versions also kept answered and expired ones in this shape). */
export interface QuestionRecord extends RegisterQuestionRequest {
  awakeableId: string
  state: 'open' | 'answered' | 'expired'
  answer?: unknown
  answeredAt?: number
}

/**
 * What the resumer keeps of a question once it is answered, expired or closed: enough to answer a late answer with
 * 409 or 410 and to check its owner. It is cleared after a retention period (a delayed `forget`).
 */
export interface QuestionTombstone {
  sessionKey: string
  state: 'answered' | 'expired' | 'closed'
  reason?: QuestionCloseReason
  endedAt: number
}

/** The resumer's state of one question, as the shared handler `resumer/<awakeableId>/describe` returns it. */
export type StoredQuestion = QuestionRecord | QuestionTombstone

/**
 * The services' settings a run's journal depends on: its limits, the operator's approval policy, the question
 * timeouts, the history budget, the sub-agent limits and the tools it offers the model. An operator who changes one of
 * them and restarts the services while a run waits (on a question, on its children, on a retry) must not change the
 * commands that run issues on its next attempt, or Restate refuses the replay (a journal mismatch, retried forever).
 *
 * Every run journals these settings in one `settings` step as it starts and keeps them on every attempt; its sub-agents
 * get them in their request. A change applies to the runs that start after it. Plain JSON: it is a step result and
 * part of a child's request.
 */
export interface RunSettings {
  /** Turns a run may take unless its prompt says otherwise (`ZIDANE_MAX_TURNS`). */
  maxTurns: number
  /** The model the run asks for unless its prompt names one (`ZIDANE_MODEL`; absent: the provider's default). */
  model?: string
  /** Tools each of whose calls waits for a person's approval (`ZIDANE_APPROVE_TOOLS`). */
  approveTools: string[]
  /** Tools always refused (`ZIDANE_DENY_TOOLS`). */
  denyTools: string[]
  questionTimeoutMs?: number
  approvalTimeoutMs?: number
  /** History budget of what the run sends the model (`ZIDANE_COMPACT_BUDGET_TOKENS`). */
  compactBudgetTokens: number
  maxCostUsd?: number
  maxChildDepth: number
  maxChildrenPerTurn: number
  maxChildrenPerRun: number
  /**
   * Names of the tools the operator's selection offered when the run started (`ZIDANE_TOOLS`, `ZIDANE_DISABLE_TOOLS`,
   * the demo tools, and `shell` only when its sandbox policy allowed it). The run and its sub-agents offer these and
   * no others.
   */
  tools: string[]
  /**
   * The MCP servers of the run's tenant when it started (docs/mcp.md): the run and its sub-agents list these servers'
   * tools in one journaled step each; absent (no server) they journal none, whatever the operator configures later.
   */
  mcpServers?: string[]
}

/**
 * Input of `resumer/<awakeableId>/answer`. `owner`, when given, is the start every session key of the caller's tenant
 * has (`<tenant>~`): a question of another session key is answered as unknown, so an API key can neither answer nor
 * detect another tenant's questions. Without it (an answer-link token, which authorizes by itself) any owner goes.
 */
export interface OwnedAnswerRequest extends AnswerRequest {
  owner?: string
}
