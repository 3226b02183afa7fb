import type { ToolContext, ToolDef, ToolResult } from 'zidane'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { stepKey } from 'zidane/durable'
import type { McpCallPhase, McpElicitingCalls, McpScope, McpServerConfig, McpToolEntry } from 'zidane/tools'

/** Asks the session's user `question` and waits for the answer (its text; an error result when none came in time). */
export type AskUser = (question: string, toolCtx: ToolContext) => Promise<ToolResult>

const INTERRUPTED: McpCallPhase = { kind: 'result', result: { content: INTERRUPTED_TOOL_TEXT, isError: true } }

/**
 * `tool` of a server that may ask for input (`elicitation: true`), journaling its own steps: the call up to its first
 * request for input or its result is one step (at most once: a call cut off is reported interrupted, never sent
 * again); each request becomes a question in the session's pending list (`ask`, answered through
 * `/v1/awakeables/{id}/resolve`), and the answer, delivered to the call this process holds open, up to the next
 * request or the result, one more step. A call this process no longer holds (it was restarted while the question
 * waited, or another replica resumed the run) is reported interrupted.
 */
export function elicitingMcpTool(tool: ToolDef, entry: McpToolEntry, server: McpServerConfig, calls: McpElicitingCalls, scope: McpScope, ask: AskUser): ToolDef {
  return {
    spec: tool.spec,
    journal: 'self',
    execute: async (input, toolCtx) => {
      const key = `${toolCtx.runId}:${toolCtx.callId}`
      const step = (name: string, run: () => Promise<McpCallPhase> | undefined): Promise<McpCallPhase> =>
        toolCtx.runtime.step(stepKey(toolCtx.runId, 'tool', `t${toolCtx.turn}`, toolCtx.callId, name), async attempt => (attempt.resumed ? INTERRUPTED : ((await run()) ?? INTERRUPTED)), { atMostOnce: true })
      let phase = await step('mcp-call', () => calls.start(entry, server, scope, input, key, toolCtx.signal))
      for (let answers = 1; phase.kind === 'elicit'; answers++) {
        const answer = await ask(`The tool ${entry.name} asks: ${phase.message}\nAnswer with JSON matching ${JSON.stringify(phase.requestedSchema)} (or "decline").`, toolCtx)
        const value = answer.isError ? 'cancel' : typeof answer.content === 'string' ? answer.content : JSON.stringify(answer.content)
        phase = await step(`mcp-answer-${answers}`, () => calls.answer(key, value))
      }
      return phase.result
    },
  }
}
