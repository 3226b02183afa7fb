import { ProviderError } from '../errors/zidane-error'
import type { ModelCatalog } from './model-catalog'
import { resolveModelName } from './model-catalog'
import type { Provider } from './provider'

/** Options of {@link modelRouter}: the catalog and one provider per catalog entry. */
export interface ModelRouterOptions {
  catalog: ModelCatalog
  providers: Readonly<Record<string, Provider>>
}

/**
 * One {@link Provider} over several: each request goes to the provider its `model` names (`provider:model`; bare: the
 * catalog's default provider), with the model as that provider spells it. A name the catalog does not know fails the
 * request with a terminal `provider_unknown_model` that lists the known ones. Its own `name` and `model` are the
 * default provider's.
 */
export function modelRouter(options: ModelRouterOptions): Provider {
  const fallback = options.providers[options.catalog.defaultProvider]
  if (fallback === undefined) throw new ProviderError(`modelRouter: no provider named ${options.catalog.defaultProvider}`, { code: 'provider_unknown_model' })
  return {
    name: fallback.name,
    model: fallback.model,
    stream: (request, onDelta) => {
      const resolved = resolveModelName(options.catalog, request.model)
      const provider = 'unknown' in resolved ? undefined : options.providers[resolved.provider]
      if ('unknown' in resolved || provider === undefined) {
        return Promise.reject(new ProviderError(`The model cannot be used: ${'unknown' in resolved ? resolved.unknown : 'no provider'}`, { code: 'provider_unknown_model', retryable: false }))
      }
      return provider.stream({ ...request, model: resolved.model }, onDelta)
    },
  }
}
