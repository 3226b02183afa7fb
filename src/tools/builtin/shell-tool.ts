import type { ToolDef, ToolResult } from '../tool'
import { optionalInteger, requiredString } from './tool-input'
import type { CommandSandbox } from './command-sandbox'
import type { CommandOutcome } from './run-command'
import { runCommand } from './run-command'
import { toolEnvironment } from './tool-environment'
import type { Workspace } from './workspace'

/** Limits of the `shell` tool. */
export interface ShellToolOptions {
  /** Timeout when the call gives none. Default 120000 ms. */
  timeoutMs?: number
  /** Largest `timeoutMs` a call may ask for. Default 600000 ms. */
  maxTimeoutMs?: number
  /** Cap of each of stdout and stderr; past it the head and tail are kept. Default 64 KiB. */
  maxOutputBytes?: number
  /** Time between SIGTERM and SIGKILL when a command is stopped. Default 2000 ms. */
  killGraceMs?: number
  /** Runs every command inside this sandbox (see `bubblewrapSandbox`). Default: none, the command runs as the host process's user. */
  sandbox?: CommandSandbox
  /** Host variables passed to commands besides PATH, LANG and TERM (HOME is the workspace). Default: none. */
  passEnv?: readonly string[]
}

/** Default `shell` timeout. */
export const SHELL_DEFAULT_TIMEOUT_MS = 120_000
/** Default largest timeout a `shell` call may ask for. */
export const SHELL_DEFAULT_MAX_TIMEOUT_MS = 600_000
/** Default cap of each `shell` output stream. */
export const SHELL_DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024

/**
 * The `shell` tool: runs a command with `bash -c` in the workspace root and returns its exit code, stdout and stderr.
 * A non-zero exit, a timeout or an abort is a result with `isError`; the whole process group is killed on timeout or abort.
 * The command gets a minimal environment (`toolEnvironment`), never the host process's own.
 */
export function shellTool(workspace: Workspace, options: ShellToolOptions = {}): ToolDef {
  const defaultTimeoutMs = options.timeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? SHELL_DEFAULT_MAX_TIMEOUT_MS, defaultTimeoutMs)
  const maxOutputBytes = options.maxOutputBytes ?? SHELL_DEFAULT_MAX_OUTPUT_BYTES
  return {
    spec: {
      name: 'shell',
      description: `Run a bash command (bash -c) in the workspace root. Returns the exit code, stdout and stderr (each capped at ${maxOutputBytes} bytes; the middle of longer output is omitted). Default timeout ${defaultTimeoutMs} ms, at most ${maxTimeoutMs} ms.`,
      inputSchema: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The bash command to run.' },
          timeoutMs: { type: 'integer', minimum: 1, maximum: maxTimeoutMs, description: `Timeout in milliseconds. Default ${defaultTimeoutMs}.` },
        },
        required: ['command'],
        additionalProperties: false,
      },
    },
    isConcurrencySafe: false,
    execute: async (input, ctx) => {
      const command = requiredString(input, 'command')
      const timeoutMs = optionalInteger(input, 'timeoutMs', 1, maxTimeoutMs) ?? defaultTimeoutMs
      const cwd = (await workspace.resolve('.')).absolute
      const run = { command, cwd, timeoutMs, maxOutputBytes, signal: ctx.signal, env: toolEnvironment(cwd, options.passEnv), ...(options.sandbox ? { sandbox: options.sandbox } : {}) }
      const outcome = await runCommand(options.killGraceMs === undefined ? run : { ...run, killGraceMs: options.killGraceMs })
      return formatOutcome(outcome, timeoutMs)
    },
  }
}

function formatOutcome(outcome: CommandOutcome, timeoutMs: number): ToolResult {
  const sections = [statusLine(outcome, timeoutMs)]
  if (outcome.stdout !== '') sections.push(`stdout:\n${outcome.stdout}`)
  if (outcome.stderr !== '') sections.push(`stderr:\n${outcome.stderr}`)
  if (outcome.stdout === '' && outcome.stderr === '') sections.push('(no output)')
  const failed = outcome.exitCode !== 0 || outcome.timedOut || outcome.aborted || outcome.error !== undefined
  return failed ? { content: sections.join('\n'), isError: true } : { content: sections.join('\n') }
}

function statusLine(outcome: CommandOutcome, timeoutMs: number): string {
  if (outcome.error !== undefined) return `The command could not be started: ${outcome.error}`
  if (outcome.timedOut) return `The command timed out after ${timeoutMs} ms and was killed.`
  if (outcome.aborted) return 'The command was aborted and killed.'
  if (outcome.exitCode === null) return `The command was killed by signal ${outcome.exitSignal ?? 'unknown'}.`
  return `Exit code: ${outcome.exitCode}`
}
