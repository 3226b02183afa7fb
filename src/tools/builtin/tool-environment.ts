/** Variables every tool process gets, besides HOME; their values come from the host. */
const BASE_VARIABLES = ['PATH', 'LANG', 'TERM'] as const

/**
 * The whole environment of a tool process: PATH, LANG and TERM from `source` (with defaults), HOME set to the
 * workspace, and the variables the operator named in `pass`. Nothing else of the host's environment: no API key, no
 * secret reaches a command unless it is named.
 */
export function toolEnvironment(workspace: string, pass: readonly string[] = [], source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'dumb' }
  for (const name of [...BASE_VARIABLES, ...pass]) {
    const value = source[name]
    if (value !== undefined) env[name] = value
  }
  env.HOME = workspace
  return env
}
