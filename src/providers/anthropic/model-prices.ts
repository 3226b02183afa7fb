import type { Usage } from '../content'
import table from './models.json' with { type: 'json' }

/** List prices of one model in USD per million tokens; cache writes are priced by lifetime. */
export interface ModelPrices {
  inputPerMTok: number
  outputPerMTok: number
  cacheWrite5mPerMTok: number
  cacheWrite1hPerMTok: number
  cacheReadPerMTok: number
}

/** Prices by model id. */
export type PriceTable = Readonly<Record<string, ModelPrices>>

/**
 * The bundled price table (`models.json`). Prices change: override or extend it with `anthropic({ prices })`.
 * `claude-haiku-5-5` is listed at its ≤100k-token tier; requests above that tier cost 5× and are under-reported.
 */
export const defaultPrices: PriceTable = table.models

/** The model used when neither the request nor the provider options name one. */
export const defaultModel: string = table.defaultModel

/** Finds the prices of `model`; a dated snapshot id (`claude-sonnet-4-5-20250929`) falls back to its alias. */
export function pricesFor(model: string, prices: PriceTable): ModelPrices | undefined {
  return prices[model] ?? prices[model.replace(/-\d{8}$/, '')]
}

/**
 * The cost of one response in USD. An unknown model costs 0 (the run goes on; budgets cannot see it). Cache writes
 * without a lifetime split are priced as 5-minute writes, the API default.
 */
export function computeCostUsd(usage: Usage, model: string, prices: PriceTable = defaultPrices): number {
  const price = pricesFor(model, prices)
  if (price === undefined) return 0
  const write1h = usage.cacheWrite1hTokens ?? 0
  const write5m = usage.cacheWrite5mTokens ?? Math.max(0, usage.cacheWriteTokens - write1h)
  const unsplit = Math.max(0, usage.cacheWriteTokens - write5m - write1h)
  const microDollars = usage.inputTokens * price.inputPerMTok
    + usage.outputTokens * price.outputPerMTok
    + (write5m + unsplit) * price.cacheWrite5mPerMTok
    + write1h * price.cacheWrite1hPerMTok
    + usage.cacheReadTokens * price.cacheReadPerMTok
  return microDollars / 1_000_000
}
