import type { ContentBlock, ImageBlock, Message, ToolResultBlock } from '../content'
import type { AiSdkAssistantPart, AiSdkFileData, AiSdkMessage, AiSdkToolResultPart, AiSdkUserPart } from './language-model'

type Version = 'v3' | 'v4'

function fileData(image: ImageBlock, version: Version): AiSdkFileData {
  return version === 'v4' ? { type: 'data', data: image.data } : image.data
}

function toolResult(block: ToolResultBlock, names: ReadonlyMap<string, string>, version: Version): AiSdkToolResultPart {
  const base = { type: 'tool-result' as const, toolCallId: block.toolUseId, toolName: names.get(block.toolUseId) ?? 'unknown' }
  if (typeof block.content === 'string') return { ...base, output: { type: block.isError === true ? 'error-text' : 'text', value: block.content } }
  if (block.isError === true) return { ...base, output: { type: 'error-text', value: block.content.map(part => part.type === 'text' ? part.text : `[image ${part.mediaType}]`).join('\n') } }
  return { ...base, output: { type: 'content', value: block.content.map(part => part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'file' as const, mediaType: part.mediaType, data: fileData(part, version) }) } }
}

function userMessages(content: readonly ContentBlock[], names: ReadonlyMap<string, string>, version: Version): AiSdkMessage[] {
  const results = content.filter((block): block is ToolResultBlock => block.type === 'tool_result').map(block => toolResult(block, names, version))
  const parts: AiSdkUserPart[] = content.flatMap((block): AiSdkUserPart[] => {
    if (block.type === 'text' && block.text !== '') return [{ type: 'text', text: block.text }]
    if (block.type === 'image') return [{ type: 'file', mediaType: block.mediaType, data: fileData(block, version) }]
    return []
  })
  return [...(results.length > 0 ? [{ role: 'tool' as const, content: results }] : []), ...(parts.length > 0 ? [{ role: 'user' as const, content: parts }] : [])]
}

/** An assistant turn: signed and redacted thinking belong to our Anthropic provider and stay out; unsigned reasoning goes back. */
function assistantMessages(content: readonly ContentBlock[]): AiSdkMessage[] {
  const parts = content.flatMap((block): AiSdkAssistantPart[] => {
    if (block.type === 'text' && block.text !== '') return [{ type: 'text', text: block.text }]
    if (block.type === 'thinking' && block.signature === undefined && block.thinking !== '') return [{ type: 'reasoning', text: block.thinking }]
    if (block.type === 'tool_use') return [{ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input }]
    return []
  })
  return parts.some(part => part.type !== 'reasoning') ? [{ role: 'assistant', content: parts }] : []
}

/** Our system prompt and messages as an AI SDK provider-level prompt (`LanguageModelV3Prompt` / `V4Prompt`). */
export function toAiSdkPrompt(system: string | undefined, messages: readonly Message[], version: Version): AiSdkMessage[] {
  const names = new Map(messages.flatMap(message => message.content.flatMap(block => block.type === 'tool_use' ? [[block.id, block.name] as const] : [])))
  const head: AiSdkMessage[] = system === undefined || system === '' ? [] : [{ role: 'system', content: system }]
  return [...head, ...messages.flatMap(message => message.role === 'user' ? userMessages(message.content, names, version) : assistantMessages(message.content))]
}
