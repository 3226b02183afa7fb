import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { createHooks } from 'hookable'
import os from 'node:os'
import path from 'node:path'
import type { AgentHooks } from '../../../src/agent/types'
import { createDefaultRuntime } from '../../../src/durable/default-runtime'
import type { JsonObject } from '../../../src/durable/json'
import { createMemoryToolStateStore } from '../../../src/durable/memory-tool-state-store'
import type { ToolContext, ToolDef, ToolOutput, ToolResult } from '../../../src/tools/tool'
import { toToolResult } from '../../../src/tools/tool'

/** Builds a minimal `ToolContext` for calling a tool directly; fields can be overridden. */
export function createToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    callId: 'call_1',
    toolName: 'test_tool',
    sessionId: 'session_1',
    runId: 'run_1',
    turn: 1,
    depth: 0,
    signal: new AbortController().signal,
    runtime: createDefaultRuntime(),
    toolState: createMemoryToolStateStore(),
    emit: () => undefined,
    hooks: createHooks<AgentHooks>(),
    extras: {},
    ...overrides,
  }
}

/** Runs `tool` with `input` and a test context, normalized to a `ToolResult`. */
export async function runTool(tool: ToolDef, input: JsonObject, context: ToolContext = createToolContext()): Promise<ToolResult> {
  return toToolResult(await tool.execute(input, context))
}

/** The text of a tool result whose content is a string. */
export function textOf(output: ToolOutput): string {
  if (typeof output !== 'string') throw new Error('expected text content')
  return output
}

/** Creates a fresh temp directory and returns it with a cleanup function. */
export async function createTempDirectory(prefix = 'zidane-tools-'): Promise<{ directory: string; cleanup: () => Promise<void> }> {
  const directory = await mkdtemp(path.join(os.tmpdir(), prefix))
  return { directory, cleanup: () => rm(directory, { recursive: true, force: true }) }
}

/** Paths of a fresh sandbox: a workspace `root` and a sibling folder `outside` it (neither created yet). */
export async function createSandbox(): Promise<{ root: string; outside: string; cleanup: () => Promise<void> }> {
  const temp = await createTempDirectory()
  const base = await realpath(temp.directory)
  return { root: path.join(base, 'root'), outside: path.join(base, 'outside'), cleanup: temp.cleanup }
}
