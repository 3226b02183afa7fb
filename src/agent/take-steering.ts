import type { SteeringInbox } from '../durable/runtime'
import type { ContentBlock } from '../providers/content'
import type { Session } from '../session/session'
import type { Hookable } from 'hookable'
import { appendMessage } from './history'
import type { RunState } from './run-state'
import type { AgentHooks } from './types'

/** What {@link takeSteering} needs of the loop. */
export interface SteeringEnv {
  steering: SteeringInbox | undefined
  session: Session | undefined
  hooks: Hookable<AgentHooks>
  journaledTime: () => number
}

/**
 * Takes the messages steered into the session since the last boundary and adds them to the conversation as one user
 * turn (`<runId>-t<turn>-s`), so the model sees them in this turn's request (merged after the tool results, when the
 * previous turn ended with some).
 */
export async function takeSteering(state: RunState, env: SteeringEnv): Promise<void> {
  if (!env.steering) return
  const messages = await env.steering.take({ sessionId: state.sessionId, runId: state.runId, turn: state.turn })
  if (messages.length === 0) return
  const turnId = `${state.runId}-t${state.turn}-s`
  const content: ContentBlock[] = messages.map(message => ({ type: 'text', text: message.text }))
  appendMessage(state.messages, 'user', content)
  // Idempotent by turn id: a resumed run replaying this take (same messages, see SteeringInbox) saves it once.
  await env.session?.appendTurns([{ id: turnId, runId: state.runId, role: 'user', content, createdAt: env.journaledTime() }])
  await env.hooks.callHook('steering', { runId: state.runId, turn: state.turn, turnId, messages })
}
