/** How the services run the `shell` tool, as the stack decided at start-up (`ZIDANE_SHELL_STATUS`, JSON). */
export interface ShellStatusReport {
  mode: 'sandboxed' | 'unsandboxed' | 'disabled'
  reason: string
}

/** JSON schema of `ShellStatusReport` in `/readyz`. */
export const shellStatusSchema = {
  type: 'object',
  required: ['mode', 'reason'],
  properties: { mode: { type: 'string', enum: ['sandboxed', 'unsandboxed', 'disabled'] }, reason: { type: 'string' } },
} as const

/** Reads the shell status `npm start` passes the gateway; undefined when not set or not valid (the gateway runs alone). */
export function readShellStatus(env: NodeJS.ProcessEnv = process.env): ShellStatusReport | undefined {
  try {
    const parsed = JSON.parse(env.ZIDANE_SHELL_STATUS ?? '') as Partial<ShellStatusReport>
    const modes = shellStatusSchema.properties.mode.enum as readonly string[]
    return typeof parsed.reason === 'string' && typeof parsed.mode === 'string' && modes.includes(parsed.mode) ? { mode: parsed.mode, reason: parsed.reason } : undefined
  } catch {
    return undefined
  }
}
