import { resolve } from 'node:path'
import type { ConfigurationError } from '../errors/zidane-error'
import { createSqliteRuntime } from '../durable/sqlite/index'
import { readFlags, usageError } from './parse-args'
import type { CliIo } from './run-command'

/** The parsed `zidane steer` command line. */
export interface SteerArgs { sessionDb: string; session: string; text: string }

/** Usage of `zidane steer`. */
export const STEER_USAGE = `Usage: zidane steer --session-db <file> --session <id> --text "<message>"

  Saves a message for the session at once. A run of that session working now (in any process) sees it before its next
  model request; otherwise it becomes the prompt of the next run, once the current one ended. Delivered once.`

const STEER_FLAGS = new Set(['--session-db', '--session', '--text'])

/** Parses `zidane steer …`; throws a `ConfigurationError` with the usage on bad input. */
export function parseSteerArgs(argv: readonly string[]): SteerArgs {
  const { values } = readFlags(argv.slice(1), STEER_FLAGS, new Set(), steerUsage)
  const sessionDb = values.get('--session-db')
  const session = values.get('--session')
  const text = values.get('--text')
  if (sessionDb === undefined || session === undefined || text === undefined) throw steerUsage('--session-db, --session and --text are required.')
  if (text.trim() === '') throw steerUsage('--text must not be empty.')
  return { sessionDb, session, text }
}

/** Saves the message in the sessions file (one durable commit) and prints its id. */
export async function steerCommand(args: SteerArgs, io: CliIo): Promise<number> {
  const runtime = createSqliteRuntime({ path: resolve(io.cwd, args.sessionDb) })
  try {
    const message = await runtime.steer(args.session, args.text)
    io.stdout.write(`saved message ${message.id} for session ${args.session}\n`)
    return 0
  } finally {
    runtime.close()
  }
}

function steerUsage(message: string): ConfigurationError {
  return usageError(message, STEER_USAGE)
}
