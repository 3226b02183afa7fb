import type { ToolDef, ToolResult } from '../tool'
import { optionalInteger, requiredString } from './tool-input'
import type { CommandSandbox } from './command-sandbox'
import { watchWorkspaceQuota } from './quota-watch'
import type { QuotaWatch } from './quota-watch'
import type { CommandOutcome, RunCommandOptions } from './run-command'
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
  /** The tenant the workspace belongs to: its commands share the tenant's limits in the sandbox. Default: none (a tenant of its own per command). */
  tenant?: string
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
    usesToolState: false,
    execute: async (input, ctx) => {
      const command = requiredString(input, 'command')
      const timeoutMs = optionalInteger(input, 'timeoutMs', 1, maxTimeoutMs) ?? defaultTimeoutMs
      const cwd = (await workspace.resolve('.')).absolute
      const stop = new AbortController()
      const run: RunCommandOptions = { command, cwd, timeoutMs, maxOutputBytes, signal: AbortSignal.any([ctx.signal, stop.signal]), env: toolEnvironment(cwd, options.passEnv), ...sandboxOptions(options) }
      const watch = await quotaWatch(options, cwd, () => stop.abort())
      const outcome = await runCommand(options.killGraceMs === undefined ? run : { ...run, killGraceMs: options.killGraceMs }).finally(() => watch?.stop())
      return formatOutcome(outcome, timeoutMs, { exceeded: watch?.exceeded, quotaBytes: options.sandbox?.workspaceQuotaBytes })
    },
  }
}

function sandboxOptions(options: ShellToolOptions): Pick<RunCommandOptions, 'sandbox' | 'wrapOptions'> {
  if (options.sandbox === undefined) return {}
  return { sandbox: options.sandbox, wrapOptions: options.tenant === undefined ? {} : { tenant: options.tenant } }
}

/** With a sandbox that has a workspace quota, a watch that stops the command once the workspace passes it. */
async function quotaWatch(options: ShellToolOptions, cwd: string, stop: () => void): Promise<QuotaWatch | undefined> {
  const quotaBytes = options.sandbox?.workspaceQuotaBytes
  return quotaBytes === undefined ? undefined : watchWorkspaceQuota(cwd, quotaBytes, stop)
}

/** Why the workspace quota stopped the command (`exceeded`), and the quota the sandbox enforces. */
interface QuotaOutcome {
  exceeded: string | undefined
  quotaBytes: number | undefined
}

function formatOutcome(outcome: CommandOutcome, timeoutMs: number, quota: QuotaOutcome): ToolResult {
  const sections = [quota.exceeded === undefined ? statusLine(outcome, timeoutMs) : `The command was stopped: ${lowerFirst(quota.exceeded)}. Delete files to make room.`]
  // A write cut short is a failure even when the command's last step succeeded.
  const cutWrite = quota.quotaBytes !== undefined && hitFileSizeLimit(outcome)
  if (cutWrite) sections.push(`A file reached the largest size a command may write: the workspace quota of ${(quota.quotaBytes ?? 0) / (1024 * 1024)} MiB.`)
  if (outcome.stdout !== '') sections.push(`stdout:\n${outcome.stdout}`)
  if (outcome.stderr !== '') sections.push(`stderr:\n${outcome.stderr}`)
  if (outcome.stdout === '' && outcome.stderr === '') sections.push('(no output)')
  const failed = outcome.exitCode !== 0 || outcome.timedOut || outcome.aborted || outcome.error !== undefined || quota.exceeded !== undefined || cutWrite
  return failed ? { content: sections.join('\n'), isError: true } : { content: sections.join('\n') }
}

function statusLine(outcome: CommandOutcome, timeoutMs: number): string {
  if (outcome.error !== undefined) return `The command could not be started: ${outcome.error}`
  if (outcome.timedOut) return `The command timed out after ${timeoutMs} ms and was killed.`
  if (outcome.aborted) return 'The command was aborted and killed.'
  if (outcome.exitCode === null) return `The command was killed by signal ${outcome.exitSignal ?? 'unknown'}.`
  return `Exit code: ${outcome.exitCode}`
}

/** SIGXFSZ (`ulimit -f`) ended the command or one of its processes (bash reports the latter on stderr). */
function hitFileSizeLimit(outcome: CommandOutcome): boolean {
  return outcome.exitSignal === 'SIGXFSZ' || outcome.exitCode === 128 + 25 || outcome.stderr.includes('File size limit exceeded')
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1)
}
