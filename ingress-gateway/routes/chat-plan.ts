import { randomUUID } from 'node:crypto'
import { sessionInterface } from '../../contract/interfaces'
import type { SessionRunRequest } from '../../contract/session'
import { ADMISSION_WAIT_MS, admitPrompt, admitSteering } from '../admission'
import { ANSWER_WAIT_MS, answerQuestion } from '../answer-question'
import type { RouteDependencies } from '../app'
import { GatewayError } from '../errors'
import { checkModel } from '../model-check'
import type { UiStreamTarget } from '../protocols/ui-message-sse'
import { approvalResponses, newestUserText, type ApprovalResponse, type ChatRequestBody } from '../protocols/ui-message-request'
import { restateCall } from '../restate-ingress'
import { sessionKey } from '../tenancy'

/** What a chat request streams: the session's events after `after`, mapped for `target`. */
export interface ChatPlan { after: number; target: UiStreamTarget }

type PlanDependencies = Pick<RouteDependencies, 'ingress' | 'timeline' | 'limits' | 'config' | 'admissions'>

/**
 * Does what a chat request asks and says what to stream: answers its approvals (the run's continuation), or steers
 * the session's running run (that run from the steering message on), or admits a prompt (the first run that starts
 * after now: the event count is read before the prompt is sent, so the stream misses nothing it caused).
 */
export async function planChat(dependencies: PlanDependencies, tenant: string, sessionId: string, body: ChatRequestBody): Promise<ChatPlan> {
  const approvals = approvalResponses(body.messages)
  if (approvals.length > 0) return answerApprovals(dependencies, tenant, sessionId, approvals)
  const prompt = newestUserText(body.messages)
  const { ingress, timeline, limits, config } = dependencies
  checkModel(config.models, body.model)
  const key = sessionKey(tenant, sessionId)
  const waitMs = config.servicesWaitMs ?? ADMISSION_WAIT_MS
  const run = await timeline.latestRun(key)
  if (run !== undefined && !run.ended) {
    await admitSteering(ingress, tenant, { sessionKey: key, text: prompt, maxRuns: limits.maxConcurrentRuns }, waitMs)
    // A new assistant message (the client added a user message) of the same run, from where the run takes the message.
    return { after: run.startSeq - 1, target: { runId: run.runId, messageId: `${run.runId}:${randomUUID()}`, resumeAt: { steerText: prompt } } }
  }
  const after = await timeline.eventCount(key)
  await admitPrompt(dependencies.admissions, tenant, { sessionKey: key, run: runRequest(prompt, body), maxRuns: limits.maxConcurrentRuns }, { kind: 'bounded', waitMs })
  return { after, target: {} }
}

function runRequest(prompt: string, { model, maxTurns, policy }: ChatRequestBody): SessionRunRequest {
  return { prompt, ...(model === undefined ? {} : { model }), ...(maxTurns === undefined ? {} : { maxTurns }), ...(policy === undefined ? {} : { policy }) }
}

/**
 * Checks that every approval answered is pending in the session (409 `approval_not_pending` otherwise; 404 for a
 * session this key does not have), answers each as `POST /v1/awakeables/:id/resolve` would, and streams the run on.
 */
async function answerApprovals({ ingress, timeline, config }: PlanDependencies, tenant: string, sessionId: string, approvals: ApprovalResponse[]): Promise<ChatPlan> {
  const key = sessionKey(tenant, sessionId)
  const view = await restateCall(() => ingress.client.client(sessionInterface, key).get({ limit: 1 }))
  if (!view.exists) throw new GatewayError('session_not_found', `session ${sessionId} not found`)
  const callIds = new Set<string>()
  for (const { id, toolCallId } of approvals) {
    const pending = view.pending.find(question => question.id === id && question.kind === 'approval')
    if (pending === undefined) throw new GatewayError('approval_not_pending', `approval ${id} is not pending in session ${sessionId}`)
    const callId = pending.callId ?? toolCallId
    if (callId !== undefined) callIds.add(callId)
  }
  const run = await timeline.latestRun(key)
  if (run === undefined || run.ended) throw new GatewayError('approval_not_pending', `session ${sessionId} has no run waiting for an approval`)
  for (const { id, approved, reason } of approvals) {
    await answerQuestion(ingress, id, { decision: approved ? 'approve' : 'deny', ...(reason === undefined ? {} : { reason }) }, tenant, config.servicesWaitMs ?? ANSWER_WAIT_MS)
  }
  // The run is replayed from its start (a follow from now would miss the calls it opened before); the client holds it
  // up to the approved calls' results.
  const target = { runId: run.runId, continues: true, answeredApprovals: new Set(approvals.map(({ id }) => id)), resumeAt: { toolResults: callIds } }
  return { after: run.startSeq - 1, target }
}
