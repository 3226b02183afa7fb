import { createDefaultRuntime } from '../durable/default-runtime'
import type { DurableRuntime, InterruptedRun } from '../durable/runtime'
import { ConfigurationError, RunTakenOverError, SessionError } from '../errors/zidane-error'
import { findOpenToolCalls, HEAL_TEXT } from '../session/heal'
import { createSession, loadSession } from '../session/session'
import type { Session, SessionClock } from '../session/session'
import type { SessionRun } from '../session/types'
import type { ToolDef } from '../tools/tool'
import { AgentHookable, fireHook, hookFailureEnds } from './fire-hook'
import type { HookFailureSink } from './fire-hook'
import { EventRecorder } from '../session/session-events'
import type { NewSessionEvent } from '../session/session-events'
import { appendMessage } from './history'
import { buildStats, checkpointMismatch, compactedHistoryStart, limitsFor, nextRunId, resumeRunState, startRunState } from './run-lifecycle'
import { RunControl } from './run-control'
import type { RunState } from './run-state'
import { runTurnLoop } from './run-loop'
import type { LoopEnv, LoopOutcome } from './run-loop'
import type { Agent, AgentStats, CreateAgentOptions, DurableOption, RunOptions } from './types'

interface ResolvedDurable { runtime: DurableRuntime; onInterrupted: 'resume' | 'heal' }

function resolveDurable(option: DurableOption | undefined): ResolvedDurable {
  if (!option) return { runtime: createDefaultRuntime(), onInterrupted: 'heal' }
  if ('step' in option) return { runtime: option, onInterrupted: 'heal' }
  return { runtime: option.runtime, onInterrupted: option.onInterrupted ?? 'heal' }
}

/**
 * Creates an agent: the loop of model steps, tool calls and decisions, journaled through `durable` (or through the
 * default runtime, which records nothing). One run at a time per agent.
 */
export function createAgent(options: CreateAgentOptions): Agent {
  const { runtime, onInterrupted } = resolveDurable(options.durable)
  assertSessionStore(options, runtime)
  const hooks = new AgentHookable()
  if (options.hooks) hooks.addHooks(options.hooks)
  const tools = new Map<string, ToolDef>((options.tools ?? []).map(tool => [tool.spec.name, tool]))
  const depth = options.depth ?? 0
  let journaledTime = 0
  // Replay-stable on durable runtimes: the latest journaled time, else a read of the runtime's own clock.
  const clock = { now: (): number | Promise<number> => (journaledTime > 0 ? journaledTime : runtime.now()) }
  let sessionPromise: Promise<Session> | undefined
  let control: RunControl | undefined

  /** Where a failing `session:event` hook is reported: the run in progress (it fails at its next boundary). */
  let activeRun: HookFailureSink = {}
  const session = (): Promise<Session> => (sessionPromise ??= openSession(options, runtime, clock).then((opened) => {
    publishSessionEvents(opened, new EventRecorder({ depth }), hooks, event => fireHook(hooks, activeRun, 'session:event', event))
    return opened
  }))

  const execute = async (current: Session, state: RunState, record: SessionRun, runControl: RunControl): Promise<AgentStats> => {
    activeRun = state
    journaledTime = Math.max(journaledTime, state.startedAt)
    await hooks.callHook('run:start', { runId: state.runId, sessionId: current.id, prompt: state.prompt, resumed: state.resumed })
    await current.upsertRun(record)
    // The record is saved before the claim, so a process killed in between still leaves the prompt and checkpoint.
    if (depth === 0 && !state.resumed) await runtime.runs?.claim(current.id, state.runId)
    await current.setStatus('running')
    await current.appendTurns([{ id: `${state.runId}-u`, runId: state.runId, role: 'user', content: [{ type: 'text', text: state.prompt }], createdAt: state.startedAt }])
    appendMessage(state.messages, 'user', [{ type: 'text', text: state.prompt }])
    const outcome = await runLoopSafely(state, buildLoopEnv(current, runControl, state))
    // A hook fired without waiting that failed during the last turn still fails the run.
    const hookFailed = outcome.status === 'completed' && hookFailureEnds(runtime, state)
    return finish(current, state, record, hookFailed ? { status: 'error', reason: state.hookFailure ?? '' } : outcome)
  }

  const runLoopSafely = async (state: RunState, env: LoopEnv): Promise<LoopOutcome> => {
    try {
      return await runTurnLoop(state, env)
    } catch (error) {
      if (runtime.isControlError(error)) throw error
      return { status: 'error', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  const buildLoopEnv = (current: Session, runControl: RunControl, state: RunState): LoopEnv => ({
    runtime,
    tools,
    hooks,
    behavior: options.behavior ?? {},
    session: current,
    toolState: options.toolState ?? runtime.stores.toolState,
    extras: options.toolExtras ?? {},
    canUseTool: options.canUseTool,
    requestInteraction: options.requestInteraction,
    // Sub-agents never take the session's steering messages: they are for the top-level run.
    steering: depth === 0 ? options.steering ?? runtime.steering : undefined,
    toolSignal: runControl.toolSignal,
    modelSignal: runControl.modelSignal,
    isSuspending: () => runControl.isSuspending,
    isAborted: () => runControl.isAborted,
    onJournaledTime: time => { journaledTime = Math.max(journaledTime, time) },
    journaledTime: () => journaledTime,
    provider: options.provider,
    system: options.system,
    markLive: replayDoneNotifier(state),
  })

  /** Fires `replay:done` once, when the first step of a resumed run executes live. */
  const replayDoneNotifier = (state: RunState): (() => void) => {
    let pending = state.resumed
    return () => {
      if (!pending) return
      pending = false
      fireHook(hooks, state, 'replay:done', {})
    }
  }

  const finish = async (current: Session, state: RunState, record: SessionRun, outcome: LoopOutcome): Promise<AgentStats> => {
    // The last step's own end time (journaled with it) dates the run's end: no extra clock entry in the journal.
    const endedAt = journaledTime > state.startedAt ? journaledTime : Math.max(await runtime.now(), journaledTime)
    journaledTime = endedAt
    const stats = buildStats(state, outcome.status, endedAt, outcome.reason)
    const finished: SessionRun = { ...record, status: outcome.status, endedAt, totals: state.totals, text: state.lastText }
    if (outcome.reason !== undefined && outcome.status !== 'completed') finished.error = outcome.reason
    await current.upsertRun(finished)
    await current.setStatus(outcome.status)
    await releaseRun(current.id, state.runId, outcome.status)
    await hooks.callHook('run:end', { runId: state.runId, stats })
    return stats
  }

  const releaseRun = async (sessionId: string, runId: string, status: string): Promise<void> => {
    if (!runtime.runs || depth > 0) return
    if (status === 'suspended') await runtime.runs.markSuspended(sessionId, runId)
    await runtime.runs.release(sessionId, runId, status)
  }

  const healRun = async (current: Session, runId: string): Promise<void> => {
    await current.healInterruptedToolCalls(HEAL_TEXT, runId)
    const record = current.runs.find(run => run.id === runId)
    if (record) await current.upsertRun({ ...record, status: 'interrupted' })
    await runtime.runs?.release(current.id, runId, 'interrupted')
  }

  const resumeRecord = async (current: Session, record: SessionRun, signal: AbortSignal | undefined): Promise<AgentStats> => {
    const runControl = beginControl(signal)
    const state = resumeRunState(current, record)
    try {
      if (depth === 0) await runtime.runs?.claim(current.id, record.id)
      return await execute(current, state, record, runControl)
    } catch (error) {
      // Lost a race for the run: the other process continues it; this one ends with the takeover text.
      if (error instanceof RunTakenOverError) return buildStats(state, 'aborted', Math.max(journaledTime, state.startedAt), error.message)
      throw error
    } finally {
      endControl(runControl)
    }
  }

  /** The run a dead process left on this session (per the run ledger), with its record. */
  const findInterrupted = async (current: Session): Promise<{ interrupted: InterruptedRun; record: SessionRun | undefined } | undefined> => {
    const interrupted = depth === 0 ? await runtime.runs?.findInterrupted(current.id) : null
    return interrupted ? { interrupted, record: current.runs.find(run => run.id === interrupted.runId) } : undefined
  }

  const settleInterrupted = async (current: Session, signal: AbortSignal | undefined): Promise<void> => {
    const found = await findInterrupted(current)
    if (found) {
      const { interrupted, record } = found
      if (record && onInterrupted === 'resume' && !interrupted.waitingOnAwakeable && checkpointMismatch(current, record) === undefined) await resumeRecord(current, record, signal)
      else await healRun(current, interrupted.runId)
      return
    }
    const running = current.runs.find(run => run.status === 'running' && run.depth === depth)
    // With a run ledger, a run still marked running belongs to a live process: refuse to start a second one beside it.
    if (running && runtime.runs) throw new SessionError(`Session ${current.id} has a run in progress in another process (${running.id}); wait for it to end, or resume it there.`, 'session_busy')
    // Without one (no durability, or Restate), a running record or an open call was left by a dead attempt: heal it.
    if (running || findOpenToolCalls(current.turns).length > 0) await current.healInterruptedToolCalls()
  }

  const beginControl = (signal: AbortSignal | undefined): RunControl => {
    if (control) throw new ConfigurationError('This agent is already running; wait for the current run to end.', 'agent_busy')
    control = new RunControl(signal)
    return control
  }
  const endControl = (runControl: RunControl): void => {
    runControl.dispose()
    if (control === runControl) control = undefined
  }

  return {
    hooks,
    runtime,
    session,
    async run(runOptions: RunOptions & { runId?: string }): Promise<AgentStats> {
      const current = await session()
      await settleInterrupted(current, runOptions.signal)
      const runControl = beginControl(runOptions.signal)
      try {
        // History the compaction drops for good is never loaded again: saved with the run record below.
        current.dropHistoryBefore(compactedHistoryStart(current, options.behavior ?? {}, depth))
        const runId = runOptions.runId ?? nextRunId(current, runtime)
        const startedAt = await runtime.now()
        const { state, record } = startRunState(current, runId, runOptions.prompt, startedAt, limitsFor(options.behavior ?? {}, runOptions), depth)
        if (runOptions.traceId !== undefined) record.traceId = runOptions.traceId
        // Without durability no step is recorded: the run keeps no checkpoint, so a durable successor heals it.
        return await execute(current, state, runtime.durable ? record : withoutCheckpoint(record), runControl)
      } finally {
        endControl(runControl)
      }
    },
    async resume(resumeOptions = {}): Promise<AgentStats | null> {
      const current = await session()
      const record = (await findInterrupted(current))?.record
      if (!record) return null
      const mismatch = checkpointMismatch(current, record)
      if (mismatch !== undefined) {
        await healRun(current, record.id)
        await hooks.callHook('resume:mismatch', { runId: record.id, sessionId: current.id, reason: mismatch })
        return null
      }
      return resumeRecord(current, record, resumeOptions.signal)
    },
    abort(reason?: string): void {
      control?.abort(reason)
    },
    async suspend(suspendOptions = {}): Promise<void> {
      control?.suspend(suspendOptions.graceMs ?? 0)
    },
  }
}

/** The run record without its history checkpoint: a run that cannot be resumed, only healed. */
function withoutCheckpoint(record: SessionRun): SessionRun {
  const { baseTurnCount: _count, baseFingerprint: _fingerprint, ...rest } = record
  return rest
}

/** Refuses, at once, a session stored elsewhere than the durable runtime's store: its writes would miss the journal. */
function assertSessionStore(options: CreateAgentOptions, runtime: DurableRuntime): void {
  const store = options.session?.store
  if (!runtime.durable || store === undefined || store === runtime.stores.session) return
  throw new ConfigurationError('The session passed to createAgent is stored elsewhere than durable.stores.session; load it from the runtime\'s store.', 'session_store_mismatch')
}

async function openSession(options: CreateAgentOptions, runtime: DurableRuntime, clock: SessionClock): Promise<Session> {
  const store = runtime.stores.session
  if (options.session) {
    // Heal turns and header stamps land in journaled state: on a durable runtime they must come from its clock.
    if (runtime.durable) options.session.useClock(clock)
    return options.session
  }
  if (options.sessionId !== undefined) {
    const loaded = await loadSession(store, options.sessionId, { clock })
    return loaded ?? createSession({ id: options.sessionId, store, clock })
  }
  return createSession({ store, clock })
}

/**
 * Turns the session's writes into session events for `emit` (what it held when opened is not reported again). While
 * no `session:event` hook listens, no event is built: the recorder follows the run records, and learns the turns
 * written meanwhile only once a hook listens again (so that hook gets the events of the writes after it).
 */
function publishSessionEvents(session: Session, recorder: EventRecorder, hooks: AgentHookable, emit: (event: NewSessionEvent) => void): void {
  recorder.seed({ runs: session.runs, turns: session.turns })
  let turnsMissed = false
  session.onChange((change) => {
    if (!hooks.listens('session:event')) {
      if (change.kind === 'meta') recorder.noteRuns(change.meta)
      else turnsMissed = true
      return
    }
    if (turnsMissed) {
      // The session's turns before this write: the ones it appended last are this change's.
      recorder.noteTurns(session.turns.slice(0, session.turns.length - (change.kind === 'turns' ? change.turns.length : 0)))
      turnsMissed = false
    }
    const events = change.kind === 'turns' ? recorder.turnEvents(change.turns) : recorder.runEvents(change.meta)
    for (const event of events) emit(event)
  })
}
