import { anthropicHarness, openAiHarness } from './harnesses'
import { providerContract } from './provider-contract'

providerContract('anthropic (Messages API)', anthropicHarness())
providerContract('openai-compatible (Chat Completions)', openAiHarness())
