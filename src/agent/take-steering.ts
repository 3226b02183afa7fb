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

/** Messages taken from the steering inbox at a turn's start, and how they join the conversation. */
export interface TakenSteering {
  /** Their content, for a model request built before they are appended; undefined when none were taken. */
  readonly content: ContentBlock[] | undefined
  /** Appends them (once), when the take did not already. */
  append(): Promise<void>
}

/**
 * Takes the messages steered into the session since the last boundary and adds them to the conversation as one user
 * turn (`<runId>-t<turn>-s`), so the model sees them in this turn's request (merged after the tool results, when the
 * previous turn ended with some). With `appendNow` false they join later, through `append()`: after the results of
 * calls that run with this turn's model step.
 */
export async function takeSteering(state: RunState, env: SteeringEnv, appendNow = true): Promise<TakenSteering> {
  if (!env.steering) return NOTHING_TAKEN
  const messages = await env.steering.take({ sessionId: state.sessionId, runId: state.runId, turn: state.turn })
  if (messages.length === 0) return NOTHING_TAKEN
  const turn = state.turn
  const turnId = `${state.runId}-t${turn}-s`
  const content: ContentBlock[] = messages.map(message => ({ type: 'text', text: message.text }))
  let appended = false
  const append = async (): Promise<void> => {
    if (appended) return
    appended = true
    appendMessage(state.messages, 'user', content)
    // Idempotent by turn id: a resumed run replaying this take (same messages, see SteeringInbox) saves it once.
    await env.session?.appendTurns([{ id: turnId, runId: state.runId, role: 'user', content, createdAt: env.journaledTime() }])
    await env.hooks.callHook('steering', { runId: state.runId, turn, turnId, messages })
  }
  if (appendNow) await append()
  return { content, append }
}

const NOTHING_TAKEN: TakenSteering = { content: undefined, append: async () => undefined }
