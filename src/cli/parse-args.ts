import { ConfigurationError } from '../errors/zidane-error'
import { isSandboxMode } from '../tools/builtin/sandbox-settings'
import type { SandboxMode } from '../tools/builtin/sandbox-settings'

/** What `--durability` asks for: resume interrupted runs, ask on a terminal first, or record nothing. */
export type Durability = 'on' | 'resume-ask' | 'off'

/** How `run` reports: human text, one JSON object at the end, or one JSON event per line. */
export type OutputMode = 'text' | 'json' | 'stream-json'

/** The parsed `zidane run` command line. */
export interface RunArgs {
  command: 'run'
  prompt: string
  sessionDb?: string
  session?: string
  durability: Durability
  output: OutputMode
  workspace?: string
  /** How `shell` commands run (`--sandbox`); unset: `ZIDANE_SANDBOX`, else `auto`. */
  sandbox?: SandboxMode
  /** Tools whose every call needs a person's approval (`--approve shell,write_file`). */
  approve?: string[]
  /** Tools the run may not use (`--deny spawn`). */
  deny?: string[]
}

/** The usage text printed on a parse error or `--help`. */
export const USAGE = `Usage: zidane run --prompt "<text>" [--session-db <file>] [--session <id>] [--durability on|resume-ask|off] [--json | --stream-json] [--workspace <dir>] [--sandbox auto|required|off] [--approve <tools>] [--deny <tools>]

  --session-db   SQLite sessions file; crash recovery (--durability) applies with it
  --session      session id to load or create (default: a new session)
  --durability   on: resume an interrupted run first; resume-ask: ask on a terminal (default); off: record no checkpoints
  --json         print the run's stats as one JSON object (never asks)
  --stream-json  print one JSON event per line (never asks)
  --workspace    directory the built-in tools work in (default: the current directory)
  --sandbox      shell commands: auto: in the bubblewrap sandbox when it works here (default, or ZIDANE_SANDBOX);
                 required: in it or no shell tool; off: unsandboxed, as your user
  --approve      comma-separated tools whose every call waits for your approval (asked on a terminal; otherwise
                 answered with zidane answer, e.g. --answer approve)
  --deny         comma-separated tools the run may not use (the model gets an error result)

       zidane answer --session-db <file> --id <question id> --answer "<text>"

  answers a question a run on that sessions file waits for (the run prints the id)

       zidane steer --session-db <file> --session <id> --text "<message>"

  saves a message for the session: the running run sees it before its next model request, else the next run gets it`

const VALUE_FLAGS = new Set(['--prompt', '--session-db', '--session', '--durability', '--workspace', '--sandbox', '--approve', '--deny'])
const SWITCHES = new Set(['--json', '--stream-json'])

/** Parses `zidane run …` arguments (without the node and script paths). Throws a `ConfigurationError` with the usage on bad input. */
export function parseRunArgs(argv: readonly string[]): RunArgs {
  const [command, ...rest] = argv
  if (command !== 'run') throw usageError(command === undefined ? 'Missing command.' : `Unknown command: ${command}.`)
  const { values, switches } = readFlags(rest, VALUE_FLAGS, SWITCHES, usageError)
  return buildArgs(values, switches)
}

/**
 * Reads `--flag value` and `--flag=value` options (`valueFlags`) and bare `switchFlags`; anything else, or a value
 * flag without its value, is refused with `fail(message)`.
 */
export function readFlags(args: readonly string[], valueFlags: ReadonlySet<string>, switchFlags: ReadonlySet<string>, fail: (message: string) => Error): { values: Map<string, string>; switches: Set<string> } {
  const values = new Map<string, string>()
  const switches = new Set<string>()
  for (let index = 0; index < args.length; index++) {
    const [flag, inline] = splitFlag(args[index] as string)
    if (valueFlags.has(flag)) {
      const value = inline ?? args[++index]
      if (value === undefined) throw fail(`${flag} needs a value.`)
      values.set(flag, value)
    } else if (switchFlags.has(flag)) switches.add(flag)
    else throw fail(`Unknown option: ${flag}.`)
  }
  return { values, switches }
}

function buildArgs(values: Map<string, string>, switches: Set<string>): RunArgs {
  const prompt = values.get('--prompt')
  if (prompt === undefined || prompt.trim() === '') throw usageError('--prompt is required.')
  if (switches.size > 1) throw usageError('--json and --stream-json exclude each other.')
  const durability = values.get('--durability') ?? 'resume-ask'
  if (durability !== 'on' && durability !== 'resume-ask' && durability !== 'off') throw usageError(`--durability must be on, resume-ask or off (got ${durability}).`)
  const sandbox = values.get('--sandbox')
  if (sandbox !== undefined && !isSandboxMode(sandbox)) throw usageError(`--sandbox must be auto, required or off (got ${sandbox}).`)
  const args: RunArgs = { command: 'run', prompt, durability, output: switches.has('--json') ? 'json' : switches.has('--stream-json') ? 'stream-json' : 'text', ...(sandbox === undefined ? {} : { sandbox }) }
  for (const [flag, key] of [['--session-db', 'sessionDb'], ['--session', 'session'], ['--workspace', 'workspace']] as const) {
    const value = values.get(flag)
    if (value !== undefined) args[key] = value
  }
  for (const [flag, key] of [['--approve', 'approve'], ['--deny', 'deny']] as const) {
    const tools = values.get(flag)?.split(',').map(tool => tool.trim()).filter(Boolean)
    if (tools !== undefined) args[key] = tools
  }
  return args
}

function splitFlag(arg: string): [string, string | undefined] {
  const equals = arg.indexOf('=')
  return arg.startsWith('--') && equals !== -1 ? [arg.slice(0, equals), arg.slice(equals + 1)] : [arg, undefined]
}

/** A `cli_usage` error: `message`, then `usage`. */
export function usageError(message: string, usage = USAGE): ConfigurationError {
  return new ConfigurationError(`${message}\n\n${usage}`, 'cli_usage')
}
