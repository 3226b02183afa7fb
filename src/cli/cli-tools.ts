import { createBuiltinTools } from '../tools/builtin/create-builtin-tools'
import { listSetting, sandboxFromSettings } from '../tools/builtin/sandbox-settings'
import type { ToolDef } from '../tools/tool'
import type { RunArgs } from './parse-args'
import type { CliIo } from './run-command'

/**
 * The built-in tools of `zidane run` in `root`, with `shell` under the same sandbox settings as the services:
 * `--sandbox` (else `ZIDANE_SANDBOX`, else `auto`), `ZIDANE_SANDBOX_BWRAP`, the limits, `ZIDANE_SANDBOX_ALLOW_DOMAINS`,
 * and `ZIDANE_TOOL_ENV`. Says on stderr when `shell` runs unsandboxed for want of a sandbox, or is left out.
 */
export function cliBuiltinTools(root: string, args: RunArgs, io: CliIo): ToolDef[] {
  const choice = sandboxFromSettings(io.env, args.sandbox)
  const passEnv = listSetting(io.env.ZIDANE_TOOL_ENV)
  if (choice.mode === 'disabled') io.stderr.write(`zidane: the shell tool is left out: ${choice.reason}\n`)
  if (choice.mode === 'unsandboxed' && (args.sandbox ?? io.env.ZIDANE_SANDBOX) !== 'off') io.stderr.write(`zidane: shell commands run unsandboxed: ${choice.reason} (--sandbox off hides this)\n`)
  const tools = createBuiltinTools({ root, shell: choice.sandbox ? { sandbox: choice.sandbox, passEnv } : { passEnv } })
  return choice.mode === 'disabled' ? tools.filter(tool => tool.spec.name !== 'shell') : tools
}
