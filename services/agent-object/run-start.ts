import type * as restate from '@restatedev/restate-sdk'
import type { DurableRuntime } from 'zidane/durable'
import * as restateSdk from '@restatedev/restate-sdk'
import { createCoalescedClock, SESSION_STATE_KEY } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import type { RunSettings } from '../../contract/session'
import type { AgentDeps } from '../agent-deps'
import { mcpSettings } from '../mcp-servers'
import { currentRunSettings } from '../run-settings'
import { sessionWorkspace, tenantOfSessionKey } from '../workspace'

/** What a session invocation decides as it starts, journaled in one step: when, with which settings, in which folder. */
export interface RunStart {
  /** When the invocation started (the step's wall time): the invocation record's, the index's and a killed run's end. */
  startedAt: number
  /** The services' settings the run's journal depends on (docs/design/journal-compatibility.md). */
  settings: RunSettings
  /** The session's workspace folder, created on demand. */
  root: string
}

/** {@link RunStart}, and the session's header (`null` for a new session), read at the same time. */
export interface RunStartWithHeader extends RunStart {
  header: StoredSessionHeader | null
}

/**
 * Journals the invocation's start in one step named `settings` (the name the step had when it held the settings
 * alone): its time, the settings of this process for the tools `offered`, and the workspace folder. One run command
 * instead of three (a clock read, the settings, the workspace): docs/design/journal-entries.md. The session header's
 * read is issued right after the step's command and joined with it, so the start waits for one round trip, not two;
 * the two commands are issued in this order on every replay.
 */
export async function journalRunStart(deps: AgentDeps, ctx: restate.ObjectContext, offered: readonly string[]): Promise<RunStartWithHeader> {
  const step = settingsStep(deps, ctx, offered)
  const read = ctx.get<StoredSessionHeader>(SESSION_STATE_KEY)
  // The SDK types a state read as a plain promise; it is a durable one (joined here, not awaited in turn).
  if (!restateSdk.isRestatePromise(read)) throw new restateSdk.TerminalError('run start: a state read is not a durable promise', { errorCode: 500 })
  const [start, header] = await restateSdk.RestatePromise.all([step, read])
  return { ...start, header: header ?? null }
}

function settingsStep(deps: AgentDeps, ctx: restate.ObjectContext, offered: readonly string[]): restate.RestatePromise<RunStart> {
  const tenant = tenantOfSessionKey(ctx.key)
  return ctx.run('settings', async (): Promise<RunStart> => ({
    // eslint-disable-next-line no-restricted-properties -- inside the step: journaled as its result, replayed as recorded.
    startedAt: Date.now(),
    settings: { ...currentRunSettings(deps.config, offered, deps.env), ...mcpSettings(deps.mcp, tenant) },
    root: await sessionWorkspace(deps.config.workspaceRoot, ctx.key),
  }))
}

/**
 * The session store's clock for an invocation that started at `startedAt` (journaled): coalesced as the store's own
 * default (one anchor every 8 stamps), its first anchor the journaled start instead of a `ctx.date.now()` of its own,
 * later ones `ctx.date.now()`. Call its `now()` outside any step, in the same order on every replay (the store does).
 */
export function runStartClock(ctx: restate.ObjectContext, startedAt: number): { now(): Promise<number> } {
  let anchored = false
  return createCoalescedClock(async () => {
    if (anchored) return ctx.date.now()
    anchored = true
    return startedAt
  })
}

/**
 * `runtime`, its first `now()` answering the journaled `startedAt` instead of a clock read of its own (the agent reads
 * it for the run's start before any step journaled a time); later reads are the runtime's. The same object, so
 * whatever keys on the runtime's identity still finds it. Call order is the code's, so a replay reads the same values.
 */
export function startingAt(runtime: DurableRuntime, startedAt: number): DurableRuntime {
  const read = runtime.now.bind(runtime)
  let started = false
  runtime.now = async () => {
    if (started) return read()
    started = true
    return startedAt
  }
  return runtime
}
