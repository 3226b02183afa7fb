import { demoProvider } from '../providers/demo-provider'
import type { Provider } from '../providers/provider'

/**
 * The model the CLI uses: Anthropic when `ANTHROPIC_API_KEY` is set (imported lazily), else the demo model. When the
 * Anthropic provider cannot be loaded, warns through `warn` and falls back to the demo model.
 */
export async function selectProvider(env: NodeJS.ProcessEnv, warn: (message: string) => void): Promise<Provider> {
  if (!env.ANTHROPIC_API_KEY) return demoProvider()
  try {
    const module = (await import('../providers/anthropic/index')) as { anthropic?: () => Provider }
    if (typeof module.anthropic !== 'function') throw new Error('zidane/providers/anthropic exports no anthropic()')
    return module.anthropic()
  } catch (error) {
    warn(`warning: the Anthropic provider could not be loaded (${error instanceof Error ? error.message : String(error)}); using the demo model.`)
    return demoProvider()
  }
}
