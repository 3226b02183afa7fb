import { isZidaneError } from '../errors/zidane-error'
import { parseRunArgs } from './parse-args'
import { answerCommand, parseAnswerArgs } from './answer-command'
import { runCommand } from './run-command'
import type { CliIo } from './run-command'

/** The `zidane` command: parses `argv` (without node and script paths), runs it, returns the exit code (2: usage). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    const { USAGE } = await import('./parse-args')
    io.stdout.write(`${USAGE}\n`)
    return argv.length === 0 ? 2 : 0
  }
  if (argv[0] === 'answer') return answer(argv, io)
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

async function answer(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await answerCommand(parseAnswerArgs(argv), io)
  } catch (error) {
    const usage = isZidaneError(error) && error.code === 'cli_usage'
    io.stderr.write(`${usage ? '' : 'zidane: '}${error instanceof Error ? error.message : String(error)}\n`)
    return usage ? 2 : 1
  }
}
