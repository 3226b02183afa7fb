import { isZidaneError } from '../errors/zidane-error'
import { parseRunArgs } from './parse-args'
import { runCommand } from './run-command'
import type { CliIo } from './run-command'

/** The `zidane` command: parses `argv` (without node and script paths), runs it, returns the exit code (2: usage). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    const { USAGE } = await import('./parse-args')
    io.stdout.write(`${USAGE}\n`)
    return argv.length === 0 ? 2 : 0
  }
  let args
  try {
    args = parseRunArgs(argv)
  } catch (error) {
    io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
  try {
    return await runCommand(args, io)
  } catch (error) {
    const code = isZidaneError(error) ? ` (${error.code})` : ''
    io.stderr.write(`zidane: ${error instanceof Error ? error.message : String(error)}${code}\n`)
    return 1
  }
}
