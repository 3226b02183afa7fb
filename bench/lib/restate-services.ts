import * as restate from '@restatedev/restate-sdk'
import type { AgentBehavior } from 'zidane'
import type { ContentBlock, Message, ToolUseBlock } from 'zidane/providers'
import { emptyRunTotals, restateRuntime, SESSION_STATE_KEY, sessionTurnStateKey } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import { createMemorySessionStore, createSession, loadSession } from 'zidane/session'
import type { SessionTurn } from 'zidane/session'
import { readSessionChanges } from '../../services/agent-object/session-changes'
import { eventLogObjectFor, eventWatchService } from '../../services/event-log/event-log-object'
import { recordedSessionStore } from '../../services/event-log/session-events'
import type { EventSink } from '../../services/event-log/session-events'
import { createEventOutbox } from '../../services/event-log/event-outbox'
import { createSessionLogSync } from '../../services/event-log/session-log-sync'
import { createEventDoorbell } from '../../services/event-log/event-doorbell'
import type { EventDoorbell } from '../../services/event-log/event-doorbell'
import { loadServicesConfig } from '../../services/config'
import { peerAgent } from './peer-agent'
import type { ScriptedRunShape } from './scripted-run'
import { benchProvider, echoTool, timeScriptedRun } from './scripted-run'

/**
 * Input of the bench handlers: the run's shape, loop behaviour (e.g. `persistDir`), two diagnostic switches of
 * `restateRuntime` that isolate costs: `coalesce` (fewer journaled clock reads) and `memorySession` (no session state),
 * and `eventLog`: the session store the deployment's session object uses, every write recorded, with the real `events`
 * object of the same key: `'derived'` as the deployment (the log derives the events from this object's state through
 * its shared `changes`, woken by the bench's doorbell, and the run journals one sync at its end), `'turn-sends'` the
 * alternative we measured it against (one journaled one-way `append` of the events per turn boundary, as sub-agents
 * record theirs).
 */
export interface BenchRunRequest extends ScriptedRunShape {
  behavior?: AgentBehavior
  coalesce?: boolean
  memorySession?: boolean
  eventLog?: 'derived' | 'turn-sends'
  /** Diagnostic: no journaled intent before each unsafe call (`stepIntents: false`), to show what the intents cost. */
  withoutIntents?: boolean
  /** Diagnostic of `eventLog: 'derived'`: leave the bench's doorbell out (the log syncs at the run's journaled sync only). */
  withoutDoorbell?: boolean
  /** Count live executions of the tool in `liveToolCalls` under the object key. */
  countToolCalls?: boolean
  /**
   * Hand-written loop only: also write what our session store writes for the same run, in its layout (one
   * `zidane_turn_<i>` key per turn and the `zidane_session` header after each), so the cost of the state layout
   * alone shows apart from the cost of our loop.
   */
  sessionWrites?: boolean
  /** Time every step round trip (`ctx.run`, `ctx.date.now`) from its call to its result: `stepWaitMs` in the result. */
  timeSteps?: boolean
}

let doorbell: EventDoorbell | undefined

/**
 * Points the bench's event doorbell at the server's ingress (as the services' at theirs). Its window is the services'
 * default, or `ZIDANE_EVENT_WINDOW_MS` as the services read it.
 */
export function useBenchDoorbell(ingressUrl: string): EventDoorbell {
  doorbell = createEventDoorbell({ ingressUrl, windowMs: loadServicesConfig().eventWindowMs })
  return doorbell
}

/** The event sink of a bench run with `eventLog`, as the deployment's session object (or the alternative) builds it. */
function benchEventSink(ctx: restate.ObjectContext, request: BenchRunRequest): EventSink | undefined {
  if (request.eventLog === 'turn-sends') return createEventOutbox(ctx, ctx.key)
  if (request.eventLog === 'derived') return createSessionLogSync(ctx, request.withoutDoorbell ? undefined : doorbell)
  return undefined
}

/** Live executions of the bench tool per object key (for requests with `countToolCalls`). */
export const liveToolCalls = new Map<string, number>()

/**
 * What the bench handlers return: the in-handler wall time of the run and its model turns; with `eventLog`, the
 * session events the run recorded (counted on the agent's `session:event` hook, which sees the same writes).
 */
export interface BenchRunResult {
  wallMs: number
  turns: number
  invocationId: string
  lastToolResult: string
  sessionEvents?: number
  /** With `timeSteps`: the time the run spent waiting on its step round trips, and how many it made. */
  stepWaitMs?: number
  steps?: number
}

/** The step round trips of one invocation, timed by {@link timedSteps}. */
interface StepTimes { waitMs: number; steps: number }

/**
 * `ctx` whose `run` and `date.now` are timed from the call to the result (the round trip to the server, the closure,
 * and the SDK's handling of both). Each timed call still returns a `RestatePromise` (`map`), so the durable
 * combinators take it. What is left of the run's wall time is the services' own work between steps.
 */
function timedSteps(ctx: restate.ObjectContext, times: StepTimes): restate.ObjectContext {
  const timed = <T>(start: () => restate.RestatePromise<T>): restate.RestatePromise<T> => {
    const started = performance.now()
    times.steps += 1
    return start().map((value, failure) => {
      times.waitMs += performance.now() - started
      if (failure !== undefined) throw failure
      return value as T
    })
  }
  const date = { now: () => timed(() => ctx.date.now() as restate.RestatePromise<number>), toJSON: () => ctx.date.toJSON() }
  const run = (...args: Parameters<restate.ObjectContext['run']>): restate.RestatePromise<unknown> => timed(() => ctx.run(...args))
  // One bound method per name: our loop reaches the context many times per turn, and its time between steps is measured.
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(ctx, {
    get(target, property) {
      if (property === 'date') return date
      if (property === 'run') return run
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      if (!bound.has(property)) bound.set(property, value.bind(target))
      return bound.get(property)
    },
  })
}

function stepTimesOf(times: StepTimes | undefined): Pick<BenchRunResult, 'stepWaitMs' | 'steps'> {
  return times ? { stepWaitMs: times.waitMs, steps: times.steps } : {}
}

/**
 * Our stack: `createAgent` on `restateRuntime`, session in object state, as `services/agent-object` wires it (with
 * `eventLog`, through the same `recordedSessionStore` and event sink, so `events/<key>` gets the run's events as the
 * deployment's does). Its shared `changes` is the session object's: what the `derived` log reads.
 */
export const benchAgent = restate.object({
  name: 'BenchAgent',
  handlers: {
    run: async (objectCtx: restate.ObjectContext, request: BenchRunRequest): Promise<BenchRunResult> => {
      const times: StepTimes | undefined = request.timeSteps ? { waitMs: 0, steps: 0 } : undefined
      const ctx = times ? timedSteps(objectCtx, times) : objectCtx
      const outbox = benchEventSink(ctx, request)
      const durable = restateRuntime(ctx, {
        promises: restate.RestatePromise,
        idSeed: ctx.key,
        ...(request.coalesce ? { coalesce: true } : {}),
        ...(request.memorySession ? { sessionStore: createMemorySessionStore() } : {}),
        ...(outbox ? { sessionStore: recordedSessionStore(ctx, outbox) } : {}),
        ...(request.withoutIntents ? { stepIntents: false } : {}),
      })
      const store = durable.stores.session
      const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
      if (times) Object.assign(times, { waitMs: 0, steps: 0 }) // the run's steps only, as the hand-written loop's
      const count = request.countToolCalls ? () => { liveToolCalls.set(ctx.key, (liveToolCalls.get(ctx.key) ?? 0) + 1) } : undefined
      let sessionEvents = 0
      const onSessionEvent = request.eventLog ? () => { sessionEvents += 1 } : undefined
      const run = await timeScriptedRun(request, durable, { session }, request.behavior ?? {}, count, onSessionEvent)
      outbox?.flush()
      return { wallMs: run.wallMs, turns: run.turns, invocationId: ctx.request().id, lastToolResult: run.lastToolResult, ...(onSessionEvent ? { sessionEvents } : {}), ...stepTimesOf(times) }
    },
    changes: restate.handlers.object.shared({ enableLazyState: true, journalRetention: 0, idempotencyRetention: 0 }, readSessionChanges),
  },
})

/**
 * Writes `message` as turn `index` and the header counting it, in our session store's layout and shapes (for the
 * hand-written loop's `sessionWrites`).
 */
function writeTurnAsOurStoreDoes(ctx: restate.ObjectContext, index: number, message: Message): void {
  const turn: SessionTurn = { id: `turn_${index}`, runId: 'run_bench', role: message.role, content: message.content, createdAt: index }
  ctx.set(sessionTurnStateKey(index), turn)
  const header: StoredSessionHeader = {
    schemaVersion: 1, id: ctx.key, status: 'running', createdAt: 0, updatedAt: index, metadata: {}, turnCount: index + 1,
    runCount: 1, topLevelRunCount: 1, childRunCount: 0, historyFrom: 0, runFrom: 0, totals: emptyRunTotals(),
  }
  ctx.set(SESSION_STATE_KEY, header)
}

/**
 * The hand-written reference: one `ctx.run` per model call and one per tool call, the same scripted model and
 * tool, history in a local array, nothing else journaled (with `sessionWrites`, the state writes of our store too).
 */
export const handLoop = restate.object({
  name: 'HandLoop',
  handlers: {
    run: async (objectCtx: restate.ObjectContext, request: BenchRunRequest): Promise<BenchRunResult> => {
      const times: StepTimes | undefined = request.timeSteps ? { waitMs: 0, steps: 0 } : undefined
      const ctx = times ? timedSteps(objectCtx, times) : objectCtx
      const provider = benchProvider(request)
      const tool = echoTool(request.outputBytes)
      const messages: Message[] = []
      const record = (message: Message): void => {
        messages.push(message)
        if (request.sessionWrites) writeTurnAsOurStoreDoes(ctx, messages.length - 1, message)
      }
      const started = performance.now()
      record({ role: 'user', content: [{ type: 'text', text: 'benchmark run' }] })
      let turns = 0
      for (;;) {
        turns += 1
        const response = await ctx.run('model', () => provider.stream({ messages, tools: [tool.spec], signal: new AbortController().signal }, () => undefined))
        record({ role: 'assistant', content: response.content })
        const calls = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use')
        if (calls.length === 0) break
        const results: ContentBlock[] = []
        for (const call of calls) {
          const output = await ctx.run('tool', async () => tool.execute(call.input, undefined as never))
          results.push({ type: 'tool_result', toolUseId: call.id, content: typeof output === 'string' ? output : JSON.stringify(output) })
        }
        record({ role: 'user', content: results })
      }
      return { wallMs: performance.now() - started, turns, invocationId: ctx.request().id, lastToolResult: '', ...stepTimesOf(times) }
    },
  },
})

/** Bare journal round trips: `steps` sequential `ctx.run` of a trivial closure. */
export const bareSteps = restate.object({
  name: 'BareSteps',
  handlers: {
    run: async (ctx: restate.ObjectContext, request: { steps: number }): Promise<{ wallMs: number }> => {
      const started = performance.now()
      for (let step = 0; step < request.steps; step++) await ctx.run('step', () => step)
      return { wallMs: performance.now() - started }
    },
  },
})

/**
 * Every bench object served in-process (the AI SDK + Restate middleware peer too), and the deployment's event log and
 * watch for the `eventLog` runs (the log reading `BenchAgent`'s state where the deployment's reads the `session` object's).
 */
export const benchServices = [benchAgent, handLoop, bareSteps, peerAgent, eventLogObjectFor('BenchAgent'), eventWatchService] as const
