/** What the start-up banners say about the API keys: a line for people and the `-H` option of the example commands. */
export interface ApiKeyBanner {
  line: string
  /** ` -H "Authorization: Bearer …"`, or empty in open mode. */
  auth: string
}

/**
 * The banner's API key. One key (single-user development) is printed, with the file that keeps it when generated.
 * Several keys are several tenants' secrets: the banner names where they are (`GATEWAY_API_KEYS`) and prints none.
 */
export function apiKeyBanner(gatewayApiKeys: string, keyFile: string | undefined): ApiKeyBanner {
  const keys = gatewayApiKeys.split(',').map(key => key.trim()).filter(key => key !== '')
  const [only] = keys
  if (only === undefined) return { line: 'Open dev mode: no API key required.', auth: '' }
  if (keys.length > 1) return { line: `API keys: ${keys.length} in GATEWAY_API_KEYS (not printed: each is a tenant's secret).`, auth: ' -H "Authorization: Bearer <one of GATEWAY_API_KEYS>"' }
  return { line: `API key${keyFile ? ` (kept in ${keyFile})` : ''}: ${only}`, auth: ` -H "Authorization: Bearer ${only}"` }
}

/** What `npm start` prints once the stack is up. */
export interface StartBannerFacts {
  gatewayUrl: string
  /** `GATEWAY_API_KEYS` as the stack serves it (comma-separated; empty in open mode). */
  gatewayApiKeys: string
  /** Where a generated key is kept (relative to the current folder), when it was generated. */
  keyFile: string | undefined
  model: string
}

/** The start-up banner of `npm start`: the gateway, the API key or where the keys are, the model, two commands to try. */
export function startBanner(facts: StartBannerFacts): string {
  const { line, auth } = apiKeyBanner(facts.gatewayApiKeys, facts.keyFile)
  return [
    '',
    `zidane is up. Gateway: ${facts.gatewayUrl}  (OpenAPI: ${facts.gatewayUrl}/docs)`,
    `Console: ${facts.gatewayUrl}/console  (sign in with the API key)`,
    line,
    `Model: ${facts.model}`,
    '',
    'Try:',
    `  curl -s -X POST "${facts.gatewayUrl}/v1/sessions/demo/prompts?wait=true"${auth} -H "content-type: application/json" -d '{"prompt":"write: hello.txt Hello\\nread: hello.txt"}'`,
    `  curl -s ${facts.gatewayUrl}/v1/sessions/demo${auth}`,
    '',
  ].join('\n')
}
