import { aiSdkOpenAiProvider, anthropicHarness, openAiHarness } from './harnesses'
import { providerContract } from './provider-contract'

providerContract('anthropic (Messages API)', anthropicHarness())
providerContract('openai-compatible (Chat Completions)', openAiHarness())
providerContract('ai-sdk adapter over @ai-sdk/openai-compatible (Chat Completions)', openAiHarness(aiSdkOpenAiProvider))
