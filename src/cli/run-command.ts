import { resolve } from 'node:path'
import { createAgent } from '../agent/create-agent'
import type { Agent, AgentStats, InteractionRequest } from '../agent/types'
import { createSqliteRuntime } from '../durable/sqlite/sqlite-runtime'
import type { SqliteRuntime } from '../durable/sqlite/sqlite-runtime'
import { deliverSteering } from '../durable/sqlite/deliver-steering'
import type { Provider } from '../providers/provider'
import { cliBuiltinTools } from './cli-tools'
import { createInteractionTools } from '../tools/interaction-tools'
import { createSpawnTool } from '../tools/spawn-tool'
import type { ToolDef } from '../tools/tool'
import { answerHint } from './answer-hint'
import { askLine, askYesNo, shouldAskToResume } from './ask-yes-no'
import { buildDurable } from './build-durable'
import { cliToolPolicy } from './tool-policy'
import { attachOutput } from './output'
import type { RunArgs } from './parse-args'
import { selectProvider } from './select-provider'

/** The process around a CLI command: streams, environment and working directory (injected for tests). */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  env: NodeJS.ProcessEnv
  cwd: string
}

/** Runs `zidane run`: opens the sessions file, maybe resumes an interrupted run, runs the prompt, reports. Returns the exit code. */
export async function runCommand(args: RunArgs, io: CliIo): Promise<number> {
  const provider = await selectProvider(io.env, message => io.stderr.write(`${message}\n`))
  const sqlite = args.sessionDb === undefined ? undefined : createSqliteRuntime({ path: resolve(io.cwd, args.sessionDb) })
  try {
    const isTerminal = io.stdin.isTTY === true
    const agent = buildAgent(args, io, provider, sqlite, isTerminal && args.output === 'text')
    attachOutput(agent, args.output, io.stdout, io.stderr)
    await maybeResume(args, io, agent, sqlite, isTerminal)
    const stats = [await agent.run({ prompt: args.prompt }), ...(sqlite ? await deliverSteering(agent, sqlite) : [])]
    const last = stats.at(-1) as AgentStats
    if (args.output === 'json') io.stdout.write(`${JSON.stringify(last)}\n`)
    return last.status === 'completed' ? 0 : 1
  } finally {
    sqlite?.close()
  }
}

async function maybeResume(args: RunArgs, io: CliIo, agent: Agent, sqlite: SqliteRuntime | undefined, isTerminal: boolean): Promise<void> {
  if (!sqlite || !shouldAskToResume(args.durability, args.output, isTerminal)) return
  const session = await agent.session()
  const interrupted = await sqlite.runs.findInterrupted(session.id)
  if (!interrupted) return
  const prompt = session.runs.find(run => run.id === interrupted.runId)?.prompt ?? interrupted.runId
  if (await askYesNo(`Session ${session.id} has an interrupted run ("${prompt.slice(0, 60)}"). Resume it?`, { input: io.stdin, output: io.stderr })) await agent.resume()
}

function buildAgent(args: RunArgs, io: CliIo, provider: Provider, sqlite: SqliteRuntime | undefined, interactive: boolean): Agent {
  const root = resolve(io.cwd, args.workspace ?? '.')
  const durable = buildDurable(args.durability, sqlite)
  const answer = (id: string, value: string): void => { void agent.runtime.resolveAwakeable(id, value) }
  const requestInteraction = (request: InteractionRequest): void => {
    if (interactive) void askLine(`${request.question} `, { input: io.stdin, output: io.stderr }).then(text => answer(request.awakeable.id, text))
    else if (!sqlite) answer(request.awakeable.id, '(no answer: the command line is not interactive)')
    else io.stderr.write(`${request.question}\nwaiting for an answer: ${answerHint(resolve(io.cwd, args.sessionDb ?? ''), request.awakeable.id)}\n`)
  }
  const builtin = cliBuiltinTools(root, args, io)
  const spawn = createSpawnTool({ childAgent: () => ({ provider, tools: builtin }), createAgent })
  const tools: ToolDef[] = [...builtin, ...createInteractionTools({ requestInteraction }), spawn]
  const persistDir = args.sessionDb === undefined ? undefined : persistDirOf(resolve(io.cwd, args.sessionDb))
  const agent = createAgent({ provider, tools, ...cliToolPolicy(args), requestInteraction, ...(durable ? { durable } : {}), ...(args.session === undefined ? {} : { sessionId: args.session }), ...(persistDir ? { behavior: { persistDir } } : {}) })
  return agent
}

/** Where the command persists tool outputs over 256 KiB: next to the sessions file (`sessions.db` → `sessions.db.outputs/`). */
export function persistDirOf(sessionDbPath: string): string {
  return `${sessionDbPath}.outputs`
}
