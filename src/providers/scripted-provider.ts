import type { JsonObject } from '../json'
import type { ContentBlock, Usage } from './content'
import { emptyUsage } from './content'
import type { ModelRequest, ModelResponse, Provider, StopReason } from './provider'
import { copyData } from '../durable/copy-data'

/** One scripted model turn. `toolCalls` become tool_use blocks; `error` makes this request fail instead. */
export interface ScriptedTurn {
  text?: string
  thinking?: string
  toolCalls?: ReadonlyArray<{ name: string; input: JsonObject; id?: string }>
  stopReason?: StopReason
  usage?: Partial<Usage>
  costUsd?: number
  /** Waits this long before answering (honours the request's abort signal). */
  delayMs?: number
  error?: Error
}

/** A script: a list of turns played in order, or a function of the request and its index. */
export type Script = readonly ScriptedTurn[] | ((request: ModelRequest, index: number) => ScriptedTurn)

/** A provider that plays a script and records every request it received. */
export interface ScriptedProvider extends Provider {
  readonly requests: ModelRequest[]
}

/** Plays `script` turn by turn: what tests and benchmarks use instead of a real model. Past the end, it answers "done". */
export function scriptedProvider(script: Script, options: { model?: string } = {}): ScriptedProvider {
  const requests: ModelRequest[] = []
  return {
    name: 'scripted',
    model: options.model ?? 'scripted-model',
    requests,
    async stream(request, onDelta) {
      const index = requests.length
      requests.push({ ...request, messages: copyData(request.messages) })
      const turn = typeof script === 'function' ? script(request, index) : script[index] ?? { text: 'done' }
      if (turn.delayMs !== undefined && turn.delayMs > 0) await abortableDelay(turn.delayMs, request.signal)
      if (request.signal.aborted) throw abortError()
      if (turn.error) throw turn.error
      const response = toResponse(turn, index, request.model ?? options.model ?? 'scripted-model')
      for (const [blockIndex, block] of response.content.entries()) if (block.type === 'text') onDelta({ kind: 'text', index: blockIndex, delta: block.text })
      return response
    },
  }
}

function toResponse(turn: ScriptedTurn, index: number, model: string): ModelResponse {
  const content: ContentBlock[] = []
  if (turn.thinking !== undefined) content.push({ type: 'thinking', thinking: turn.thinking, signature: `sig-${index}` })
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text })
  ;(turn.toolCalls ?? []).forEach((call, callIndex) => content.push({ type: 'tool_use', id: call.id ?? `toolu_${index}_${callIndex}`, name: call.name, input: call.input }))
  const stopReason = turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'tool_use' : 'end_turn')
  return { content, stopReason, usage: { ...emptyUsage(), inputTokens: 10, outputTokens: 5, ...turn.usage }, costUsd: turn.costUsd ?? 0, model }
}

function abortError(): Error {
  const error = new Error('The request was aborted.')
  error.name = 'AbortError'
  return error
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError())
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(abortError()) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
