import { modelDeltaEvent } from 'zidane'
import type { Agent } from 'zidane'
import type { LiveHub, LiveSource } from './live-hub'

/**
 * Publishes the agent's text and thinking deltas to `hub` under `source`, and drops the source's buffer when its model
 * step ends (`model:response`, `turn:end`, `run:end`). The hooks only touch the in-memory hub, never the Restate
 * context: they run inside the model step's closure. They never throw (a throwing `model:delta` hook fails the run).
 */
export function publishAgentDeltas(agent: Pick<Agent, 'hooks'>, source: LiveSource, hub: LiveHub): void {
  agent.hooks.hook('model:delta', event => {
    const delta = modelDeltaEvent(event, source.label)
    if (delta) hub.publish({ sessionKey: source.sessionKey, ...delta.data })
  })
  agent.hooks.hook('model:response', ({ runId, turn }) => { hub.endStep(source.sessionKey, runId, turn) })
  agent.hooks.hook('turn:end', ({ runId, turn }) => { hub.endStep(source.sessionKey, runId, turn) })
  agent.hooks.hook('run:end', ({ runId }) => { hub.endStep(source.sessionKey, runId) })
}

/**
 * Where a child's deltas go: its root session's key, and its own label (as its durable `child:*` events name it). A
 * child's `sessionId` is its parent's session key (`<tenant>~<id>`) for a direct child, or
 * `<tenant>~<id>:<label>[:<label>…]` deeper down (session ids never hold `:`).
 */
export function childLiveSource(sessionId: string | undefined, label: string): LiveSource | undefined {
  if (sessionId === undefined || sessionId === '') return undefined
  return { sessionKey: sessionId.split(':')[0] ?? sessionId, label }
}
