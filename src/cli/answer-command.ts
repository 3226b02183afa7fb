import { resolve } from 'node:path'
import type { ConfigurationError } from '../errors/zidane-error'
import { createSqliteRuntime } from '../durable/sqlite/index'
import { readFlags, usageError } from './parse-args'
import type { CliIo } from './run-command'

/** The parsed `zidane answer` command line. */
export interface AnswerArgs { sessionDb: string; id: string; answer: string }

/** Usage of `zidane answer`. */
export const ANSWER_USAGE = `Usage: zidane answer --session-db <file> --id <question id> --answer "<text>"

  Answers a question (ask_user, present_plan, an approval) a run on that sessions file waits for. The id is the one
  the waiting run printed. The answer is kept in the file: a run that is not running now gets it when it resumes.`

const ANSWER_FLAGS = new Set(['--session-db', '--id', '--answer'])

/** Parses `zidane answer …`; throws a `ConfigurationError` with the usage on bad input. */
export function parseAnswerArgs(argv: readonly string[]): AnswerArgs {
  const { values } = readFlags(argv.slice(1), ANSWER_FLAGS, new Set(), answerUsage)
  const sessionDb = values.get('--session-db')
  const id = values.get('--id')
  const answer = values.get('--answer')
  if (sessionDb === undefined || id === undefined || answer === undefined) throw answerUsage('--session-db, --id and --answer are required.')
  return { sessionDb, id, answer }
}

/** Resolves the question's awakeable in the sessions file; the waiting run (in any process) continues with the answer. */
export async function answerCommand(args: AnswerArgs, io: CliIo): Promise<number> {
  const runtime = createSqliteRuntime({ path: resolve(io.cwd, args.sessionDb) })
  try {
    const open = await runtime.pendingAwakeables()
    if (!open.some(question => question.id === args.id)) {
      io.stderr.write(`zidane: no open question ${args.id} in ${args.sessionDb} (unknown, or answered already: the first answer stands)\n`)
      return 1
    }
    await runtime.resolveAwakeable(args.id, args.answer)
    io.stdout.write(`answered ${args.id}\n`)
    return 0
  } finally {
    runtime.close()
  }
}

function answerUsage(message: string): ConfigurationError {
  return usageError(message, ANSWER_USAGE)
}
