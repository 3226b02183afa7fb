import { join } from 'node:path'
import { DEFAULT_DOORBELL_WINDOW_MS } from './event-log/event-doorbell'

/** Settings of the services process, read from the environment (documented in docs/configuration.md). */
export interface ServicesConfig {
  port: number
  /** Address to bind; `npm start` uses 127.0.0.1, containers 0.0.0.0. */
  host: string
  identityKeys: string[]
  workspaceRoot: string
  /**
   * Where tool outputs over 256 KiB go (`behavior.persistDir`, `ZIDANE_PERSIST_DIR`). Unset: the session's own
   * workspace (`<workspace>/<session>/tool-results/<callId>.txt`), where its file tools read them.
   */
  persistDir: string | undefined
  maxChildDepth: number
  /**
   * Restate inactivity timeout of the agent handlers (default 60 s): an invocation that waits (on a question, on its
   * children, on a timer) this long without journal progress is suspended and holds no process. 0 suspends at every
   * await (the always-replay test mode).
   */
  inactivityTimeoutMs: number
  /**
   * Restate abort timeout (default 30 min), counted from the inactivity timeout: how long a step that is still running
   * (a model call, a tool) may take beyond it before Restate aborts the attempt and retries.
   */
  abortTimeoutMs: number
  /**
   * Most attempts Restate makes of one agent invocation before it kills it (`ZIDANE_MAX_ATTEMPTS`, default
   * {@link DEFAULT_MAX_ATTEMPTS}, about twelve minutes of Restate's retries; `0` or `unlimited`: no bound). Every
   * attempt that ends without the handler returning counts, for every invocation the process was running, so an outage
   * longer than the bound ends the runs in flight as failed. The backstop for a crash outside any step; a step that
   * crashes the process is caught long before, by `maxStepCrashes`.
   */
  maxAttempts: number | undefined
  /**
   * Attempts that may end while one step of an agent run runs before that step is not run again and fails the run
   * (`ZIDANE_MAX_STEP_CRASHES`, default 3; `0`: off): see `RestateRuntimeOptions.crashGuard`.
   */
  maxStepCrashes: number | undefined
  /** Tools that need a person's approval before each call (`ZIDANE_APPROVE_TOOLS`, comma-separated). */
  approveTools: string[]
  /** Tools that are always refused (`ZIDANE_DENY_TOOLS`, comma-separated). */
  denyTools: string[]
  /** Token budget of what a run sends the model; older turns are left out past it (`compactStrategy: 'tail'`). */
  compactBudgetTokens: number
  /** Serve the demo tools (`fail`): on with the demo model, or with `ZIDANE_DEMO_TOOLS=1`. */
  demoTools: boolean
  questionTimeoutMs: number | undefined
  /** How long an approval waits before it expires and its call is denied (`ZIDANE_APPROVAL_TIMEOUT_MS`; default: the question timeout). */
  approvalTimeoutMs: number | undefined
  defaultMaxTurns: number
  maxCostUsd: number | undefined
  /** Sub-agents one turn may start (`ZIDANE_MAX_CHILDREN_PER_TURN`, default 8). */
  maxChildrenPerTurn: number
  /** Sub-agents a run tree may start in all (`ZIDANE_MAX_CHILDREN_PER_RUN`, default 32). */
  maxChildrenPerRun: number
  /**
   * Restate's ingress as the services reach it (`RESTATE_INGRESS_URL`): the event doorbell wakes a session's log
   * there after each write, and the live server registers this replica's hub there. Unset: a log catches up only at
   * the runs' journaled syncs (before a wait, at a run's end), and the hub is not registered.
   */
  ingressUrl: string | undefined
  /** Shortest time between two doorbell syncs of one session's log (`ZIDANE_EVENT_WINDOW_MS`, default 25). */
  eventWindowMs: number
  /**
   * How long a session may stay idle (no run started or ended, no question asked) before it is deleted
   * (`ZIDANE_SESSION_RETENTION_DAYS`; `ZIDANE_SESSION_RETENTION_MS` wins, for tests). Undefined: sessions are kept.
   */
  sessionRetentionMs: number | undefined
}

function numberFrom(value: string | undefined, fallback: number): number {
  const parsed = value === undefined || value === '' ? Number.NaN : Number(value)
  return Number.isFinite(parsed) ? parsed : fallback
}

/**
 * Attempts of an agent invocation when `ZIDANE_MAX_ATTEMPTS` is unset: about twelve minutes of Restate's retries, so a
 * services restart or deploy never ends a run, while a run that crashes the process outside any step still ends.
 */
export const DEFAULT_MAX_ATTEMPTS = 360

/** Crashes of one step when `ZIDANE_MAX_STEP_CRASHES` is unset. */
export const DEFAULT_MAX_STEP_CRASHES = 3

/** `ZIDANE_MAX_ATTEMPTS` read: a whole number of at least 1, or undefined (no bound) for `0` and `unlimited`. */
function maxAttemptsFrom(value: string | undefined): number | undefined {
  if (value?.trim().toLowerCase() === 'unlimited') return undefined
  return positiveOrOff(numberFrom(value, DEFAULT_MAX_ATTEMPTS))
}

/** A whole number of at least 1, or undefined (off) for anything less. */
function positiveOrOff(value: number): number | undefined {
  const whole = Math.floor(value)
  return whole >= 1 ? whole : undefined
}

function listFrom(value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(Boolean)
}

/** `ZIDANE_SESSION_RETENTION_MS`, else `ZIDANE_SESSION_RETENTION_DAYS` in ms; undefined when neither is above 0. */
function retentionFrom(env: NodeJS.ProcessEnv): number | undefined {
  const ms = numberFrom(env.ZIDANE_SESSION_RETENTION_MS, 0)
  const days = numberFrom(env.ZIDANE_SESSION_RETENTION_DAYS, 0)
  const retention = ms > 0 ? Math.floor(ms) : Math.floor(days * 24 * 60 * 60 * 1000)
  return retention > 0 ? retention : undefined
}

/** Reads `ServicesConfig` from `env`. */
export function loadServicesConfig(env: NodeJS.ProcessEnv = process.env): ServicesConfig {
  const questionTimeoutMs = numberFrom(env.ZIDANE_QUESTION_TIMEOUT_MS, 0)
  const approvalTimeoutMs = numberFrom(env.ZIDANE_APPROVAL_TIMEOUT_MS, questionTimeoutMs)
  const maxCostUsd = numberFrom(env.ZIDANE_MAX_COST_USD, 0)
  const workspaceRoot = env.ZIDANE_WORKSPACE_ROOT ?? join(process.cwd(), '.zidane', 'workspaces')
  return {
    port: numberFrom(env.SERVICES_PORT, 9080),
    host: env.SERVICES_HOST ?? '0.0.0.0',
    identityKeys: (env.RESTATE_IDENTITY_KEYS ?? '').split(',').map(key => key.trim()).filter(Boolean),
    workspaceRoot,
    persistDir: env.ZIDANE_PERSIST_DIR || undefined,
    maxChildDepth: numberFrom(env.ZIDANE_MAX_CHILD_DEPTH, 2),
    inactivityTimeoutMs: numberFrom(env.ZIDANE_INACTIVITY_TIMEOUT_MS, 60_000),
    abortTimeoutMs: numberFrom(env.ZIDANE_ABORT_TIMEOUT_MS, 30 * 60_000),
    maxAttempts: maxAttemptsFrom(env.ZIDANE_MAX_ATTEMPTS),
    maxStepCrashes: positiveOrOff(numberFrom(env.ZIDANE_MAX_STEP_CRASHES, DEFAULT_MAX_STEP_CRASHES)),
    questionTimeoutMs: questionTimeoutMs > 0 ? questionTimeoutMs : undefined,
    approvalTimeoutMs: approvalTimeoutMs > 0 ? approvalTimeoutMs : undefined,
    defaultMaxTurns: numberFrom(env.ZIDANE_MAX_TURNS, 50),
    maxCostUsd: maxCostUsd > 0 ? maxCostUsd : undefined,
    maxChildrenPerTurn: numberFrom(env.ZIDANE_MAX_CHILDREN_PER_TURN, 8),
    maxChildrenPerRun: numberFrom(env.ZIDANE_MAX_CHILDREN_PER_RUN, 32),
    approveTools: listFrom(env.ZIDANE_APPROVE_TOOLS),
    compactBudgetTokens: numberFrom(env.ZIDANE_COMPACT_BUDGET_TOKENS, 100_000),
    demoTools: env.ZIDANE_DEMO_TOOLS === '1' || !env.ANTHROPIC_API_KEY,
    denyTools: listFrom(env.ZIDANE_DENY_TOOLS),
    ingressUrl: env.RESTATE_INGRESS_URL || undefined,
    eventWindowMs: numberFrom(env.ZIDANE_EVENT_WINDOW_MS, DEFAULT_DOORBELL_WINDOW_MS),
    sessionRetentionMs: retentionFrom(env),
  }
}
