import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult } from '@ai-sdk/provider'
import type { ScriptedRunShape } from './scripted-run'

const NO_USAGE: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
}

/** Thrown by the scripted model's `doStream`: the peer's run calls `generateText`, which never streams. */
export class ScriptedStreamUnsupportedError extends Error {
  readonly code = 'bench_scripted_stream_unsupported'
}

/** The content of `turn`: the bench's tool call (text `step <turn>`, `echo { turn }`) while tool turns remain, then the answer. */
function contentOf(shape: ScriptedRunShape, turn: number): LanguageModelV4Content[] {
  if (turn >= shape.toolTurns) return [{ type: 'text', text: 'done' }]
  return [{ type: 'text', text: `step ${turn}` }, { type: 'tool-call', toolCallId: `call_${turn}`, toolName: 'echo', input: JSON.stringify({ turn }) }]
}

/**
 * The bench's scripted model as an AI SDK `LanguageModelV4` (the spec `ai` 7 takes): the same tool call per turn as
 * {@link benchProvider}, then the answer, with `shape.modelDelayMs` per turn. It reads the turn from the prompt (the
 * assistant messages in it), so a model rebuilt by a replaying attempt continues where the run is.
 */
export function scriptedLanguageModel(shape: ScriptedRunShape): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'zidane-bench',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      const turn = options.prompt.filter(message => message.role === 'assistant').length
      if (shape.modelDelayMs > 0) await new Promise(resolve => setTimeout(resolve, shape.modelDelayMs))
      const content = contentOf(shape, turn)
      const finished = turn >= shape.toolTurns ? 'stop' : 'tool-calls'
      return { content, finishReason: { unified: finished, raw: finished }, usage: NO_USAGE, warnings: [] }
    },
    async doStream() {
      throw new ScriptedStreamUnsupportedError('the scripted bench model answers doGenerate only')
    },
  }
}
