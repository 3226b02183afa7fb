import type { Provider } from 'zidane/providers'
import { anthropic, demoProvider } from 'zidane/providers'

let cached: Provider | undefined

/** The services' model: Anthropic when `ANTHROPIC_API_KEY` is set (honouring `ANTHROPIC_BASE_URL`), else the demo model. */
export function servicesProvider(env: NodeJS.ProcessEnv = process.env): Provider {
  if (cached) return cached
  const model = env.ZIDANE_MODEL
  cached = env.ANTHROPIC_API_KEY
    ? anthropic({ apiKey: env.ANTHROPIC_API_KEY, ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}), ...(model ? { model } : {}) })
    : demoProvider(model ? { model } : {})
  return cached
}
