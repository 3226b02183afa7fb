import type { RecordedRequest, ScriptedResponse } from './types'

/** The text of the newest user message that has any (tool results carry none): the prompt a scripted model answers. */
export function lastUserText(request: RecordedRequest): string {
  const messages = (request.body?.messages as unknown as Array<{ role: string; content: string | Array<{ text?: string }> }> | undefined) ?? []
  const texts = messages.filter(message => message.role === 'user').map(message => typeof message.content === 'string' ? message.content : message.content.map(block => block.text ?? '').join(''))
  return texts.filter(text => text !== '').at(-1) ?? ''
}

/** A text of `words` numbered words (`<prefix>0 <prefix>1 …`), streamed one word every `intervalMs`. */
export function streamedWords(words: number, intervalMs: number, prefix = 'word'): ScriptedResponse {
  const text = Array.from({ length: words }, (_, index) => `${prefix}${index}`).join(' ')
  return { kind: 'message', content: [{ type: 'text', text }], usage: { input_tokens: 20, output_tokens: words }, deltaIntervalMs: intervalMs }
}
