import type { Provider } from 'zidane/providers'
import { anthropic, demoProvider } from 'zidane/providers'

/** The services' model: Anthropic when `ANTHROPIC_API_KEY` is set (honouring `ANTHROPIC_BASE_URL`), else the demo model. */
export function servicesProvider(env: NodeJS.ProcessEnv): Provider {
  const model = env.ZIDANE_MODEL
  return env.ANTHROPIC_API_KEY
    ? anthropic({ apiKey: env.ANTHROPIC_API_KEY, ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}), ...(model ? { model } : {}) })
    : demoProvider(model ? { model } : {})
}
