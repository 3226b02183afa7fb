import { createHooks } from 'hookable'
import type { AgentHooks } from '../../../src/agent/types'
import type { DurableRuntime } from '../../../src/durable/runtime'
import type { Session } from '../../../src/session/session'
import type { ToolContext } from '../../../src/tools/tool'

/** A `ToolContext` for driving a tool directly inside a handler, the way the loop would. */
export function toolContext(runtime: DurableRuntime, overrides: Partial<ToolContext> & { callId: string; session?: Session } ): ToolContext {
  return {
    toolName: 'tool',
    sessionId: 'session',
    runId: 'run-1',
    turn: 1,
    depth: 0,
    signal: new AbortController().signal,
    runtime,
    hooks: createHooks<AgentHooks>(),
    emit: () => undefined,
    extras: {},
    ...overrides,
  }
}
