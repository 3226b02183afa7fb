import type { Usage } from '../content'

/** List prices of one model in USD per million tokens. Cached input falls back to the input price. */
export interface ChatModelPrices {
  inputPerMTok: number
  outputPerMTok: number
  cachedInputPerMTok?: number
}

/** Prices by model id. */
export type ChatPriceTable = Readonly<Record<string, ChatModelPrices>>

/**
 * A few OpenAI list prices (USD per million tokens) as a starting point; prices change and every endpoint has its own,
 * so operators pass `prices` to add or override models. An unknown model costs 0.
 */
export const defaultChatPrices: ChatPriceTable = {
  'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 },
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
  'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6, cachedInputPerMTok: 0.1 },
  'o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4, cachedInputPerMTok: 0.275 },
}

/** Finds the prices of `model`; a dated snapshot id (`gpt-4o-2024-08-06`) falls back to its alias. */
export function chatPricesFor(model: string, prices: ChatPriceTable): ChatModelPrices | undefined {
  return prices[model] ?? prices[model.replace(/-\d{4}-\d{2}-\d{2}$/, '')]
}

/** The cost of one response in USD: `inputTokens` (uncached), cached reads and output, each at its price. */
export function computeChatCostUsd(usage: Usage, model: string, prices: ChatPriceTable): number {
  const price = chatPricesFor(model, prices)
  if (price === undefined) return 0
  const microDollars = usage.inputTokens * price.inputPerMTok
    + usage.cacheReadTokens * (price.cachedInputPerMTok ?? price.inputPerMTok)
    + usage.outputTokens * price.outputPerMTok
  return microDollars / 1_000_000
}
