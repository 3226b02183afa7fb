import { isZidaneError } from '../errors/zidane-error'
import { parseRunArgs, USAGE } from './parse-args'
import { answerCommand, parseAnswerArgs } from './answer-command'
import { runCommand } from './run-command'
import { parseSteerArgs, steerCommand } from './steer-command'
import type { CliIo } from './run-command'

/** The `zidane` command: parses `argv` (without node and script paths), runs it, returns the exit code (2: usage). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    io.stdout.write(`${USAGE}\n`)
    return argv.length === 0 ? 2 : 0
  }
  try {
    if (argv[0] === 'answer') return await answerCommand(parseAnswerArgs(argv), io)
    if (argv[0] === 'steer') return await steerCommand(parseSteerArgs(argv), io)
    return await runCommand(parseRunArgs(argv), io)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (isZidaneError(error) && error.code === 'cli_usage') {
      io.stderr.write(`${message}\n`)
      return 2
    }
    io.stderr.write(`zidane: ${message}${isZidaneError(error) ? ` (${error.code})` : ''}\n`)
    return 1
  }
}
