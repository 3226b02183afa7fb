export { aiSdkModel, mapAiSdkError } from './ai-sdk-provider'
export type { AiSdkModelOptions } from './ai-sdk-provider'
export type { AiSdkLanguageModel } from './language-model'
export { toAiSdkPrompt } from './to-ai-sdk-prompt'
