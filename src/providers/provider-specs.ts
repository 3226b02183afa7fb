import { defaultModel as anthropicDefaultModel, defaultPrices as anthropicPrices } from './anthropic/model-prices'
import type { ModelPrices } from './anthropic/model-prices'
import type { CatalogProvider, ModelCatalog } from './model-catalog'
import type { ChatModelPrices } from './openai-compatible/chat-prices'

/**
 * One provider of `ZIDANE_PROVIDERS` (docs/providers.md). An `openai-compatible` provider without `models` takes any
 * model name (and then `defaultModel` is needed for bare requests). Holds no secret: the key is read by the services from the
 * variable `apiKeyEnv` names (default `ZIDANE_<NAME>_API_KEY`, e.g. `ZIDANE_OPENAI_API_KEY`), so the gateway, which reads the same
 * variable to know the models, never sees a key.
 */
export type ProviderSpec =
  | { type: 'openai-compatible'; baseURL?: string; apiKeyEnv?: string; models?: string[]; defaultModel?: string; prices?: Record<string, ChatModelPrices>; maxTokensField?: 'max_completion_tokens' | 'max_tokens'; sendReasoning?: boolean }
  | { type: 'anthropic'; baseURL?: string; apiKeyEnv?: string; models?: string[]; defaultModel?: string; prices?: Record<string, ModelPrices> }
  | { type: 'demo'; models?: string[]; defaultModel?: string }

/** The deployment's model configuration: the catalog every process checks names against, and each provider's spec. */
export interface DeploymentModels {
  catalog: ModelCatalog
  specs: Readonly<Record<string, ProviderSpec>>
}

/** Thrown when `ZIDANE_PROVIDERS` or `ZIDANE_DEFAULT_PROVIDER` cannot be used; the message says why. */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError'
}

function parseSpecs(text: string | undefined): Record<string, ProviderSpec> {
  if (text === undefined || text.trim() === '') return {}
  let parsed: unknown
  try { parsed = JSON.parse(text) } catch { throw new ModelConfigError('ZIDANE_PROVIDERS is not valid JSON') }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ModelConfigError('ZIDANE_PROVIDERS must be a JSON object of providers by name')
  for (const [name, spec] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[a-z][a-z0-9_-]*$/.test(name)) throw new ModelConfigError(`ZIDANE_PROVIDERS: provider name ${JSON.stringify(name)} must be lowercase letters, digits, - or _`)
    const type = (spec as { type?: unknown } | null)?.type
    if (type !== 'openai-compatible' && type !== 'anthropic' && type !== 'demo') throw new ModelConfigError(`ZIDANE_PROVIDERS.${name}.type must be openai-compatible, anthropic or demo`)
    if ('apiKey' in (spec as object)) throw new ModelConfigError(`ZIDANE_PROVIDERS.${name}: put the key in its own variable and name it with apiKeyEnv, never in ZIDANE_PROVIDERS`)
  }
  return parsed as Record<string, ProviderSpec>
}

/** The name of the variable holding `name`'s key. */
export function apiKeyEnvOf(name: string, spec: ProviderSpec): string {
  return spec.type !== 'demo' && spec.apiKeyEnv ? spec.apiKeyEnv : spec.type === 'anthropic' ? 'ANTHROPIC_API_KEY' : `ZIDANE_${name.toUpperCase().replace(/-/g, '_')}_API_KEY`
}

function catalogEntry(spec: ProviderSpec): CatalogProvider {
  if (spec.type === 'anthropic') {
    const models = [...Object.keys(anthropicPrices), ...Object.keys(spec.prices ?? {}), ...(spec.models ?? [])]
    return { models, defaultModel: spec.defaultModel ?? anthropicDefaultModel }
  }
  if (spec.type === 'demo') return { models: spec.models ?? [], defaultModel: spec.defaultModel ?? 'zidane-demo' }
  return { models: spec.models === undefined ? 'any' : [...spec.models, ...Object.keys(spec.prices ?? {})], defaultModel: spec.defaultModel ?? spec.models?.[0] ?? '' }
}

/** `ZIDANE_MODEL` (`provider:model` or bare) made the default provider's default model, and its provider the default. */
function withDefaultModel(catalog: ModelCatalog, name: string | undefined): ModelCatalog {
  if (!name) return catalog
  const colon = name.indexOf(':')
  const prefix = colon > 0 ? name.slice(0, colon) : undefined
  const providerName = prefix !== undefined && catalog.providers[prefix] !== undefined ? prefix : catalog.defaultProvider
  const provider = catalog.providers[providerName]
  if (provider === undefined) return catalog
  const model = providerName === prefix ? name.slice(colon + 1) : name
  return { defaultProvider: providerName, providers: { ...catalog.providers, [providerName]: { ...provider, defaultModel: model } } }
}

/**
 * The deployment's providers, read the same way by the services and the gateway: `ZIDANE_PROVIDERS` (JSON, no keys),
 * plus `anthropic` when `ANTHROPIC_API_KEY` (or, where the key is not given, `ZIDANE_ANTHROPIC=on`) is set and the file names none, plus the demo model when there is no
 * Anthropic provider (as before). The default provider is `ZIDANE_DEFAULT_PROVIDER`, else `anthropic`, else the first
 * of `ZIDANE_PROVIDERS`, else `demo`; `ZIDANE_MODEL` sets its default model (and, spelled `provider:model`, the
 * default provider).
 */
export function deploymentModels(env: NodeJS.ProcessEnv): DeploymentModels {
  const configured = parseSpecs(env.ZIDANE_PROVIDERS)
  // The gateway never gets the key: `ZIDANE_ANTHROPIC=on` tells it the services have one (the stack sets it).
  const hasAnthropic = Object.values(configured).some(spec => spec.type === 'anthropic') || Boolean(env.ANTHROPIC_API_KEY) || env.ZIDANE_ANTHROPIC === 'on'
  const specs: Record<string, ProviderSpec> = {
    ...(hasAnthropic && !Object.values(configured).some(spec => spec.type === 'anthropic') ? { anthropic: { type: 'anthropic' as const } } : {}),
    ...(hasAnthropic ? {} : { demo: { type: 'demo' as const } }),
    ...configured,
  }
  const names = Object.keys(configured)
  const defaultProvider = env.ZIDANE_DEFAULT_PROVIDER || (specs['anthropic'] ? 'anthropic' : names[0] ?? 'demo')
  if (specs[defaultProvider] === undefined) throw new ModelConfigError(`ZIDANE_DEFAULT_PROVIDER=${defaultProvider} names no provider; known: ${Object.keys(specs).join(', ')}`)
  const providers = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, catalogEntry(spec)]))
  return { catalog: withDefaultModel({ defaultProvider, providers }, env.ZIDANE_MODEL), specs }
}
