/** Variables of the host environment the services process may see: what Node, the model provider, OpenTelemetry and zidane read. */
const SERVICES_PREFIXES = ['ZIDANE_', 'ANTHROPIC_', 'SERVICES_', 'NODE_', 'LC_', 'OTEL_']
const SERVICES_NAMES = ['PATH', 'HOME', 'LANG', 'TERM', 'TZ', 'TMPDIR', 'USER', 'RESTATE_IDENTITY_KEYS', 'RESTATE_LOGGING', 'LOG_LEVEL', 'ZIDANE_LIVE_PORT', 'ZIDANE_LIVE_TOKEN']

function listFrom(value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(Boolean)
}

/**
 * The environment of the services process: only the variables it reads (above) and those the operator passes on to
 * tools (`ZIDANE_TOOL_ENV`) and the providers' keys `ZIDANE_PROVIDERS` names; never the gateway's API keys or answer secret.
 */
export function servicesEnvironment(source: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const names = new Set([...SERVICES_NAMES, ...listFrom(source.ZIDANE_TOOL_ENV), ...providerKeyVariables(source.ZIDANE_PROVIDERS)])
  return Object.fromEntries(Object.entries(source).filter(([name]) => (names.has(name) || SERVICES_PREFIXES.some(prefix => name.startsWith(prefix))) && !name.startsWith('GATEWAY_')))
}

/**
 * The variables holding the keys of `ZIDANE_PROVIDERS`' providers (each `apiKeyEnv`, else `ZIDANE_<NAME>_API_KEY`): the
 * services get them, the gateway and the Restate server never do. A malformed value names none (the services say why).
 */
export function providerKeyVariables(providers: string | undefined): string[] {
  try {
    const parsed = JSON.parse(providers ?? '{}') as Record<string, { apiKeyEnv?: unknown }>
    return Object.entries(parsed).map(([name, spec]) => typeof spec.apiKeyEnv === 'string' ? spec.apiKeyEnv : `ZIDANE_${name.toUpperCase().replace(/-/g, '_')}_API_KEY`)
  } catch {
    return []
  }
}

/** `source` without the variables of `prefixes` nor the providers' keys (a process that does not need them, such as the Restate server). */
export function withoutVariables(source: NodeJS.ProcessEnv, prefixes: readonly string[]): NodeJS.ProcessEnv {
  const keys = new Set(providerKeyVariables(source.ZIDANE_PROVIDERS))
  return Object.fromEntries(Object.entries(source).filter(([name]) => !keys.has(name) && !prefixes.some(prefix => name.startsWith(prefix))))
}

/** Whether `apiKeys` (comma-separated) holds more than one key: several tenants share the stack. */
export function isMultiTenant(apiKeys: string): boolean {
  return listFrom(apiKeys).length > 1
}
