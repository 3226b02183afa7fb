import type { Provider, ProviderSpec } from 'zidane/providers'
import { anthropic, apiKeyEnvOf, demoProvider, deploymentModels, modelRouter, openaiCompatible } from 'zidane/providers'

function keyOf(env: NodeJS.ProcessEnv, name: string, spec: ProviderSpec): string {
  const variable = apiKeyEnvOf(name, spec)
  const key = env[variable]
  if (!key) throw new Error(`provider ${name}: set ${variable} to its API key (ZIDANE_PROVIDERS names the variable, never the key)`)
  return key
}

function buildProvider(env: NodeJS.ProcessEnv, name: string, spec: ProviderSpec, defaultModel: string): Provider {
  const model = defaultModel === '' ? {} : { model: defaultModel }
  switch (spec.type) {
    case 'demo': return demoProvider(model)
    case 'anthropic': {
      const baseURL = spec.baseURL ?? (spec.apiKeyEnv === undefined ? env.ANTHROPIC_BASE_URL : undefined)
      return anthropic({ apiKey: keyOf(env, name, spec), ...(baseURL ? { baseURL } : {}), ...model, ...(spec.prices ? { prices: spec.prices } : {}) })
    }
    case 'openai-compatible': return openaiCompatible({
      name, apiKey: keyOf(env, name, spec), model: defaultModel, ...(spec.baseURL ? { baseURL: spec.baseURL } : {}), ...(spec.prices ? { prices: spec.prices } : {}),
      ...(spec.maxTokensField ? { maxTokensField: spec.maxTokensField } : {}), ...(spec.sendReasoning ? { sendReasoning: true } : {}),
    })
  }
}

/**
 * The model of every run: one provider per entry of the deployment's catalog (`ZIDANE_PROVIDERS`, Anthropic with
 * `ANTHROPIC_API_KEY`, else the demo model), behind a router that sends each request to the provider its
 * `provider:model` names. Keys are read here from the variables the specs name, and live only in the providers.
 */
export function modelProvider(env: NodeJS.ProcessEnv): Provider {
  const { catalog, specs } = deploymentModels(env)
  const providers = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, buildProvider(env, name, spec, catalog.providers[name]?.defaultModel ?? '')]))
  return modelRouter({ catalog, providers })
}
