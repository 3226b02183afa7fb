import * as restate from '@restatedev/restate-sdk'
import type { AgentBehavior } from 'zidane'
import type { ContentBlock, Message, ToolUseBlock } from 'zidane/providers'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFileStartLog, restateRuntime } from 'zidane/restate'
import type { StepStartLog } from 'zidane/restate'
import { createMemorySessionStore, createSession, loadSession } from 'zidane/session'
import { eventLogObject } from '../../services/event-log/event-log-object'
import { recordedSessionStore } from '../../services/event-log/session-events'
import { createEventOutbox } from '../../services/event-log/event-outbox'
import type { SessionEventOutbox } from '../../services/event-log/event-outbox'
import { createEventCourier } from '../../services/event-log/event-courier'
import { loadServicesConfig } from '../../services/config'
import type { EventCourier } from '../../services/event-log/event-courier'
import type { ScriptedRunShape } from './scripted-run'
import { benchProvider, echoTool, timeScriptedRun } from './scripted-run'

/**
 * Input of the bench handlers: the run's shape, loop behaviour (e.g. `persistDir`), two diagnostic switches of
 * `restateRuntime` that isolate costs: `coalesce` (fewer journaled clock reads) and `memorySession` (no session state),
 * and `eventLog`: the session store the deployment's session object uses, every write recorded and sent to the real
 * `events` object of the same key: `'outbox'` as the deployment records a run the gateway started (the courier, and
 * a journaled batch every 64 events and at the end), `'per-write'` as before the outbox (one journaled append per write).
 */
export interface BenchRunRequest extends ScriptedRunShape {
  behavior?: AgentBehavior
  coalesce?: boolean
  memorySession?: boolean
  eventLog?: 'outbox' | 'per-write'
  /** Give the runtime a file start log (the deployment's marks of unsafe calls, synced files) in a temporary folder. */
  startLog?: boolean
  /** Diagnostic of `eventLog: 'outbox'`: leave the bench's courier out (only the journaled sends bring the events). */
  withoutCourier?: boolean
  /** Count live executions of the tool in `liveToolCalls` under the object key. */
  countToolCalls?: boolean
}

let startLog: StepStartLog | undefined
let courier: EventCourier | undefined

/**
 * Points the bench's event courier at the server's ingress (the outbox variant's fast path, as the services'). Its
 * window is the services' default, or `ZIDANE_EVENT_WINDOW_MS` as the services read it.
 */
export function useBenchCourier(ingressUrl: string): EventCourier {
  courier = createEventCourier({ ingressUrl, windowMs: loadServicesConfig().eventWindowMs })
  return courier
}

/** One start log for every bench run that asks for it, in a folder of the OS's temporary directory. */
function benchStartLog(): StepStartLog {
  startLog ??= createFileStartLog(mkdtempSync(join(tmpdir(), 'zidane-bench-starts-')))
  return startLog
}

/** Live executions of the bench tool per object key (for requests with `countToolCalls`). */
export const liveToolCalls = new Map<string, number>()

/**
 * What the bench handlers return: the in-handler wall time of the run and its model turns; with `eventLog`, the
 * session events the run recorded (counted on the agent's `session:event` hook, which sees the same writes).
 */
export interface BenchRunResult { wallMs: number; turns: number; invocationId: string; lastToolResult: string; sessionEvents?: number }

/**
 * Our stack: `createAgent` on `restateRuntime`, session in object state, as `services/agent-object` wires it (with
 * `eventLog`, through the same `recordedSessionStore`, so the run appends to `events/<key>` as the deployment's does).
 */
export const benchAgent = restate.object({
  name: 'BenchAgent',
  handlers: {
    run: async (ctx: restate.ObjectContext, request: BenchRunRequest): Promise<BenchRunResult> => {
      const outbox: SessionEventOutbox | undefined = request.eventLog ? createEventOutbox(ctx, ctx.key, request.withoutCourier ? undefined : courier, request.eventLog) : undefined
      const durable = restateRuntime(ctx, {
        promises: restate.RestatePromise,
        idSeed: ctx.key,
        ...(request.coalesce ? { coalesce: true } : {}),
        ...(request.memorySession ? { sessionStore: createMemorySessionStore() } : {}),
        ...(outbox ? { sessionStore: recordedSessionStore(ctx, outbox) } : {}),
        ...(request.startLog ? { startLog: benchStartLog() } : {}),
      })
      const store = durable.stores.session
      const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
      const count = request.countToolCalls ? () => { liveToolCalls.set(ctx.key, (liveToolCalls.get(ctx.key) ?? 0) + 1) } : undefined
      let sessionEvents = 0
      const onSessionEvent = request.eventLog ? () => { sessionEvents += 1 } : undefined
      const run = await timeScriptedRun(request, durable, { session }, request.behavior ?? {}, count, onSessionEvent)
      outbox?.sync()
      return { wallMs: run.wallMs, turns: run.turns, invocationId: ctx.request().id, lastToolResult: run.lastToolResult, ...(onSessionEvent ? { sessionEvents } : {}) }
    },
  },
})

/**
 * The hand-written reference: one `ctx.run` per model call and one per tool call, the same scripted model and
 * tool, history in a local array, nothing else journaled.
 */
export const handLoop = restate.object({
  name: 'HandLoop',
  handlers: {
    run: async (ctx: restate.ObjectContext, request: BenchRunRequest): Promise<BenchRunResult> => {
      const provider = benchProvider(request)
      const tool = echoTool(request.outputBytes)
      const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'benchmark run' }] }]
      const started = performance.now()
      let turns = 0
      for (;;) {
        turns += 1
        const response = await ctx.run('model', () => provider.stream({ messages, tools: [tool.spec], signal: new AbortController().signal }, () => undefined))
        messages.push({ role: 'assistant', content: response.content })
        const calls = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use')
        if (calls.length === 0) break
        const results: ContentBlock[] = []
        for (const call of calls) {
          const output = await ctx.run('tool', async () => tool.execute(call.input, undefined as never))
          results.push({ type: 'tool_result', toolUseId: call.id, content: typeof output === 'string' ? output : JSON.stringify(output) })
        }
        messages.push({ role: 'user', content: results })
      }
      return { wallMs: performance.now() - started, turns, invocationId: ctx.request().id, lastToolResult: '' }
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

/** Every bench object served in-process, and the deployment's event log that `eventLog` runs append to. */
export const benchServices = [benchAgent, handLoop, bareSteps, eventLogObject] as const
