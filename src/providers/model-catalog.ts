/** What one provider of a {@link ModelCatalog} serves: the models it knows (`'any'`: every name) and its default. */
export interface CatalogProvider {
  models: readonly string[] | 'any'
  defaultModel: string
}

/**
 * The providers and models a deployment serves, keyed by provider name (the `openai` of `openai:gpt-4o`). A bare
 * model name means the default provider's model. Holds no credentials, so every process may read it.
 */
export interface ModelCatalog {
  defaultProvider: string
  providers: Readonly<Record<string, CatalogProvider>>
}

/** A model name resolved against a catalog: the provider's name and the model as that provider spells it. */
export type ResolvedModel = { provider: string; model: string } | { unknown: string }

/**
 * Resolves `name` (`provider:model`, or a bare model of the default provider; absent: the default provider's default
 * model). The text before the first `:` is a provider only when the catalog has one by that name, so a bare
 * `llama3:8b` stays one model name. `unknown` is a message naming the known providers and models.
 */
export function resolveModelName(catalog: ModelCatalog, name: string | undefined): ResolvedModel {
  const colon = name?.indexOf(':') ?? -1
  const prefix = name !== undefined && colon > 0 ? name.slice(0, colon) : undefined
  const providerName = prefix !== undefined && catalog.providers[prefix] !== undefined ? prefix : catalog.defaultProvider
  const provider = catalog.providers[providerName]
  if (provider === undefined) return { unknown: `the default provider ${providerName} is not configured; known: ${knownModels(catalog)}` }
  const model = name === undefined ? provider.defaultModel : providerName === prefix ? name.slice(colon + 1) : name
  if (provider.models === 'any' || provider.models.includes(model) || model === provider.defaultModel) return { provider: providerName, model }
  const what = prefix !== undefined && providerName !== prefix && /^[a-z][a-z0-9_-]*$/i.test(prefix) ? `unknown provider ${JSON.stringify(prefix)}` : `unknown model ${JSON.stringify(name)}`
  return { unknown: `${what}; known: ${knownModels(catalog)} (a bare name means ${providerName}:<model>)` }
}

/** Every known model as `provider:model` (`provider:*` for a provider that takes any name), the default provider first. */
export function knownModels(catalog: ModelCatalog): string {
  const names = [catalog.defaultProvider, ...Object.keys(catalog.providers).filter(name => name !== catalog.defaultProvider)]
  return names.flatMap((name) => {
    const provider = catalog.providers[name]
    if (provider === undefined) return []
    return provider.models === 'any' ? [`${name}:*`] : [...new Set([provider.defaultModel, ...provider.models])].map(model => `${name}:${model}`)
  }).join(', ')
}
