export { startOpenAiServer } from './openai-server'
export { validateChatRequest } from './validate-chat-request'
export { chatChunks, chatUsage, estimateTokens } from './wire-chunks'
export type * from './types'
