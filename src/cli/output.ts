import { modelDeltaEvent } from '../agent/model-delta-event'
import type { Agent } from '../agent/types'
import type { OutputMode } from './parse-args'

/** Notices the CLI streams beside the session events (a question to answer, a resume that could not happen). */
const NOTICE_HOOKS = ['interaction:request', 'resume:mismatch'] as const

/** Reports a run on the terminal: text deltas and tool names (`text`), one JSON event per line (`stream-json`), or nothing until the end (`json`). */
export function attachOutput(agent: Agent, mode: OutputMode, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): void {
  if (mode === 'json') return
  if (mode === 'stream-json') {
    // The session events in the shape the deployment's SSE stream sends ({ type, at, data }), and the live deltas.
    agent.hooks.hook('session:event', (event) => { stdout.write(`${JSON.stringify(event)}\n`) })
    agent.hooks.hook('model:delta', (event) => {
      const delta = modelDeltaEvent(event)
      if (delta) stdout.write(`${JSON.stringify(delta)}\n`)
    })
    for (const name of NOTICE_HOOKS) agent.hooks.hook(name, (event: object) => { stdout.write(`${JSON.stringify({ type: name, data: event })}\n`) })
    return
  }
  agent.hooks.hook('model:delta', event => { if (event.delta.kind === 'text') stdout.write(event.delta.delta) })
  agent.hooks.hook('model:response', () => { stdout.write('\n') })
  agent.hooks.hook('run:start', event => { if (event.resumed) stderr.write(`[resuming run ${event.runId}]\n`) })
  agent.hooks.hook('tool:start', event => { stderr.write(`[${event.name}]\n`) })
  agent.hooks.hook('run:end', event => { if (event.stats.status !== 'completed') stderr.write(`[run ${event.stats.status}${event.stats.reason ? `: ${event.stats.reason}` : ''}]\n`) })
}
