import type { Agent } from 'zidane'
import type { LiveHub, LiveSource } from './live-hub'

/**
 * Publishes the agent's text and thinking deltas to `hub` under `source`, and drops the source's buffer when its model
 * step ends (`model:response`, `turn:end`, `run:end`). The hooks only touch the in-memory hub, never the Restate
 * context: they run inside the model step's closure. They never throw (a throwing `model:delta` hook fails the run).
 */
export function publishAgentDeltas(agent: Pick<Agent, 'hooks'>, source: LiveSource, hub: LiveHub): void {
  const label = source.label === undefined ? {} : { label: source.label }
  agent.hooks.hook('model:delta', ({ runId, turn, delta }) => {
    if (delta.kind === 'tool_input') return
    hub.publish({ sessionKey: source.sessionKey, runId, turn, attempt: delta.attempt, kind: delta.kind, offset: delta.offset, text: delta.delta, ...label })
  })
  agent.hooks.hook('model:response', ({ runId, turn }) => { hub.endStep(source, runId, turn) })
  agent.hooks.hook('turn:end', ({ runId, turn }) => { hub.endStep(source, runId, turn) })
  agent.hooks.hook('run:end', ({ runId }) => { hub.endStep(source, runId) })
}

/**
 * Where a child's deltas go: its root session's key and its label path. A child's `sessionId` is the session key of
 * its parent (`<tenant>~<id>`) for a direct child, or `<tenant>~<id>:<label>[:<label>…]` deeper down (session ids
 * never hold `:`).
 */
export function childLiveSource(sessionId: string | undefined, label: string): LiveSource | undefined {
  if (sessionId === undefined || sessionId === '') return undefined
  const [sessionKey = '', ...parents] = sessionId.split(':')
  return { sessionKey, label: [...parents, label].join('/') }
}
