export { start } from './anthropic-server'
export { PromptCache, estimateTokens } from './prompt-cache'
export type * from './types'
export { lastUserText, streamedWords } from './scripts'
