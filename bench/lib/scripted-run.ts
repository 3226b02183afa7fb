import { createAgent } from 'zidane'
import type { AgentBehavior, AgentStats, ToolDef } from 'zidane'
import type { DurableRuntime } from 'zidane/durable'
import type { Provider } from 'zidane/providers'
import type { Session } from 'zidane/session'
import { scriptedProvider } from 'zidane/testing'

/** The benchmark's scripted run: `toolTurns` turns with one tool call each, then a final answer turn. */
export interface ScriptedRunShape {
  toolTurns: number
  /** Model latency of every turn (0: the instant scripted model). */
  modelDelayMs: number
  /** Size of each tool output in bytes (default: a short text). */
  outputBytes?: number
  /** Mark the tool `replay: 'safe'` (a call cut off by a crash runs again instead of recording the interrupted text). */
  replaySafe?: boolean
}

/** The model turns a run of `shape` makes: one per tool turn, plus the final answer. */
export function modelTurnsOf(shape: ScriptedRunShape): number {
  return shape.toolTurns + 1
}

/**
 * The scripted model. It reads the turn from the history (the number of assistant messages), not from its request
 * counter, so a provider rebuilt by a replaying Restate attempt continues where the run is.
 */
export function benchProvider(shape: ScriptedRunShape, onLiveCall?: (turn: number) => void): Provider {
  return scriptedProvider(request => {
    const turn = request.messages.filter(message => message.role === 'assistant').length
    onLiveCall?.(turn)
    const delay = shape.modelDelayMs > 0 ? { delayMs: shape.modelDelayMs } : {}
    if (turn < shape.toolTurns) return { text: `step ${turn}`, toolCalls: [{ name: 'echo', input: { turn }, id: `call_${turn}` }], ...delay }
    return { text: 'done', ...delay }
  })
}

const echoTools = new Map<string, ToolDef>()

/**
 * The one tool of the scripted run: returns a short text, or `outputBytes` bytes. One instance per size, as a host
 * builds its tools once (the loop compiles a tool's input schema once per instance). The large output is built once
 * per instance, as a flat string, as the built-in tools return theirs (decoded once from their buffers): a tool that
 * returns 5 MB has already paid for them, and `'x'.repeat` per call would hand the runtime a rope whose flattening,
 * a fresh 5 MB string (3 to 4 ms here, mostly page faults and the collections it triggers), its first reader pays.
 */
export function echoTool(outputBytes: number | undefined, onLiveCall?: (turn: number) => void, replaySafe = false): ToolDef {
  const cacheKey = `${String(outputBytes)}:${String(replaySafe)}`
  const cached = onLiveCall ? undefined : echoTools.get(cacheKey)
  if (cached) return cached
  let largeOutput: string | undefined
  const tool: ToolDef = {
    ...(replaySafe ? { replay: 'safe' as const } : {}),
    spec: { name: 'echo', description: 'Echoes its turn.', inputSchema: { type: 'object', properties: { turn: { type: 'number' } } } },
    isConcurrencySafe: true,
    async execute(input) {
      onLiveCall?.(Number(input.turn))
      if (outputBytes === undefined) return `echo ${String(input.turn)}`
      return largeOutput ??= Buffer.alloc(outputBytes, 'x').toString('latin1')
    },
  }
  if (!onLiveCall) echoTools.set(cacheKey, tool)
  return tool
}

/** What a timed run reports: how long `agent.run` took, the turns it made, and the start of the last tool result. */
export interface TimedRun { wallMs: number; turns: number; stats: AgentStats; lastToolResult: string }

/**
 * Runs the scripted run once on `durable` in a fresh agent and times `agent.run` (session open excluded).
 * `onSessionEvent` listens on the `session:event` hook (only when given: a listener costs the floor variants time).
 */
export async function timeScriptedRun(shape: ScriptedRunShape, durable: DurableRuntime, session: { sessionId: string } | { session: Session }, behavior: AgentBehavior = {}, onToolCall?: (turn: number) => void, onSessionEvent?: () => void): Promise<TimedRun> {
  const agent = createAgent({ provider: benchProvider(shape), tools: [echoTool(shape.outputBytes, onToolCall, shape.replaySafe)], durable, ...session, behavior: { maxTurns: shape.toolTurns + 5, ...behavior } })
  let lastToolResult = ''
  agent.hooks.hook('tool:end', ({ result }) => { lastToolResult = typeof result.content === 'string' ? result.content.slice(0, 80) : '[blocks]' })
  if (onSessionEvent) agent.hooks.hook('session:event', onSessionEvent)
  await agent.session()
  const started = performance.now()
  const stats = await agent.run({ prompt: 'benchmark run' })
  const wallMs = performance.now() - started
  if (stats.status !== 'completed') throw new Error(`scripted run ended ${stats.status}: ${stats.reason ?? ''}`)
  return { wallMs, turns: stats.turns, stats, lastToolResult }
}
