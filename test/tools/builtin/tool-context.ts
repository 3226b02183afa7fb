import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { createHooks } from 'hookable'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import type { AgentHooks } from '../../../src/agent/types'
import { createDefaultRuntime } from '../../../src/durable/default-runtime'
import type { JsonObject } from '../../../src/json'
import { createMemoryToolStateStore } from '../../../src/durable/memory-tool-state-store'
import type { ToolContext, ToolDef, ToolOutput, ToolResult } from '../../../src/tools/tool'
import { toToolResult } from '../../../src/tools/tool'
import { bubblewrapSandbox, isSandboxUsable } from '../../../src/tools/builtin/command-sandbox'
import type { CommandSandbox } from '../../../src/tools/builtin/command-sandbox'

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

/** A test's sandbox: a workspace `root` and a sibling folder `outside` it, both real paths. */
export interface Sandbox {
  readonly root: string
  readonly outside: string
}

/**
 * Creates a fresh sandbox before each test (both folders exist, empty) and removes it after; read `sandbox.root` and
 * `sandbox.outside` inside tests and hooks registered later.
 */
export function useSandbox(): Sandbox {
  const sandbox = { root: '', outside: '' }
  let base: string | undefined
  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'zidane-tools-')))
    sandbox.root = path.join(base, 'root')
    sandbox.outside = path.join(base, 'outside')
    await mkdir(sandbox.root)
    await mkdir(sandbox.outside)
  })
  afterEach(async () => {
    if (base !== undefined) await rm(base, { recursive: true, force: true })
    base = undefined
  })
  return sandbox
}

/** Writes `files` (path relative to `base` → content) below `base`, creating parent directories. */
export async function writeTree(base: string, files: Readonly<Record<string, string | Buffer>>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(base, relative)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, content)
  }
}

/** The bubblewrap sandbox the file-worker tests run in (when this machine can run it). */
export const testSandbox = bubblewrapSandbox({ memoryMb: 2048, cpuSeconds: 60, maxProcesses: 200 })

/**
 * The modes a file-worker test runs in, for `describe.each`: without a sandbox, and in {@link testSandbox} when it is
 * usable here. `plainName` names the first mode.
 */
export function sandboxModes(plainName = 'without a sandbox'): Array<[string, CommandSandbox | undefined]> {
  const modes: Array<[string, CommandSandbox | undefined]> = [[plainName, undefined]]
  if (isSandboxUsable(testSandbox, '/tmp')) modes.push(['in the bubblewrap sandbox', testSandbox])
  return modes
}
