import { EventType, type Message, type ResumeEntry, type RunAgentInput } from '@ag-ui/core'
import { sessionInterface } from '../../contract/interfaces'
import type { PendingQuestion, SessionView } from '../../contract/session'
import { ADMISSION_WAIT_MS, admitPrompt, admitSteering } from '../admission'
import { ANSWER_WAIT_MS, answerQuestion } from '../answer-question'
import type { RouteDependencies } from '../app'
import { GatewayError } from '../errors'
import { restateCall } from '../restate-ingress'
import { sessionKey } from '../tenancy'
import { runStartedEvent, type AgUiEvent, type AgUiMappingOptions } from './ag-ui-events'
import { answerOfResume } from './ag-ui-interrupts'
import { forwardedOptions, newestUserText } from './ag-ui-request'
import { snapshotMessages } from './ag-ui-snapshot'
import type { RunPosition } from './run-timeline'

/** Most turns a snapshot carries: the newest ones (the session view's largest page). */
export const SNAPSHOT_TURNS = 200

/** What an AG-UI request streams: its opening events, where the timeline is read from, and how its items are mapped. */
export interface AgUiPlan {
  opening: AgUiEvent[]
  after: number
  mapping: AgUiMappingOptions
}

/**
 * Plans the AG-UI run of `input` on session `threadId` of `tenant`:
 * - resume entries answer their questions (each once: an already answered one is a no-op), then the latest run's
 *   continuation streams;
 * - a newest user message while a run is active steers it (`forwardedProps.mode: "steer"`) or gets 409 `run_active`;
 *   otherwise it is admitted as a prompt and its run streams from the log's end as it was before the admission;
 * - neither (a reconnect): the latest run streams, a pending question ending it with its interrupt again.
 * A continuation replays the run from its start, leaving out what the snapshot already holds.
 */
export async function planAgUiRun(dependencies: RouteDependencies, tenant: string, input: RunAgentInput): Promise<AgUiPlan> {
  const key = sessionKey(tenant, input.threadId)
  const options = forwardedOptions(input)
  const base = { threadId: input.threadId, runId: input.runId, subagents: options.subagents }
  const resume = input.resume ?? []
  // The snapshot is read before any answer or message is given: what follows it is streamed, never skipped.
  if (resume.length > 0) {
    const view = await readView(dependencies, key)
    const answered = await answerResume(dependencies, tenant, view, resume)
    return continuation(dependencies, key, view, { ...base, answeredQuestionIds: answered })
  }
  const prompt = newestUserText(input)
  if (prompt === undefined) return continuation(dependencies, key, await readView(dependencies, key), base)
  const latest = await dependencies.timeline.latestRun(key)
  if (latest !== undefined && !latest.ended) {
    if (!options.steer) throw new GatewayError('run_active', `session ${input.threadId} has a run in progress: answer its interrupt (resume), steer it (forwardedProps.mode "steer") or wait for it to end`)
    const view = await readView(dependencies, key)
    await admitSteering(dependencies.ingress, tenant, { sessionKey: key, text: prompt.text, maxRuns: dependencies.limits.maxConcurrentRuns }, servicesWaitMs(dependencies))
    return continuation(dependencies, key, view, base, latest)
  }
  // Read before the admission: the run's `run-start` comes after it.
  const after = await dependencies.timeline.eventCount(key)
  const view = await readView(dependencies, key)
  await admitPrompt(dependencies.admissions, tenant, { sessionKey: key, run: { prompt: prompt.text }, maxRuns: dependencies.limits.maxConcurrentRuns }, { kind: 'bounded', waitMs: servicesWaitMs(dependencies) })
  const messages: Message[] = [...snapshotMessages(view.turns), { id: prompt.id, role: 'user', content: prompt.text }]
  return { opening: opening(input, messages), after, mapping: { ...base, prompt: prompt.text } }
}

/** Answers each resume entry's question; the ids answered now or before (those the stream must not raise again). */
async function answerResume(dependencies: RouteDependencies, tenant: string, view: SessionView, entries: readonly ResumeEntry[]): Promise<Set<string>> {
  const pending = new Map<string, PendingQuestion>(view.pending.map(question => [question.id, question]))
  const answered = new Set<string>()
  for (const entry of entries) {
    if (answered.has(entry.interruptId)) continue
    const answer = answerOfResume(entry, pending.get(entry.interruptId)?.kind)
    await answerQuestion(dependencies.ingress, entry.interruptId, answer, tenant, dependencies.config.servicesWaitMs ?? ANSWER_WAIT_MS).catch((error: unknown) => {
      // A resume sent again (a retry, a second tab) finds its answer given: the run goes on, and so does the stream.
      if (!(error instanceof GatewayError && error.code === 'already_answered')) throw error
    })
    answered.add(entry.interruptId)
  }
  return answered
}

/** The latest run's stream from its start (404 for a session that never ran), without what the snapshot `view` holds. */
async function continuation(dependencies: RouteDependencies, key: string, view: SessionView, mapping: AgUiMappingOptions, known?: RunPosition): Promise<AgUiPlan> {
  const run = known ?? (await dependencies.timeline.latestRun(key))
  if (run === undefined) throw new GatewayError('session_not_found', `session ${mapping.threadId} not found`)
  const input = { threadId: mapping.threadId, runId: mapping.runId }
  return { opening: opening(input, snapshotMessages(view.turns)), after: run.startSeq - 1, mapping: { ...mapping, timelineRunId: run.runId, journaled: journaledOf(view.turns, run.runId) } }
}

function opening(input: Pick<RunAgentInput, 'threadId' | 'runId'>, messages: Message[]): AgUiEvent[] {
  return [runStartedEvent(input.threadId, input.runId), { type: EventType.MESSAGES_SNAPSHOT, messages }]
}

/** What the snapshot already shows of run `runId`: its journaled steps (their text), tool calls and tool results. */
function journaledOf(turns: SessionView['turns'], runId: string): NonNullable<AgUiMappingOptions['journaled']> {
  const steps = new Set<number>()
  const calls = new Set<string>()
  const results = new Set<string>()
  for (const turn of turns) {
    const step = new RegExp(`^${escapeRegExp(runId)}-t(\\d+)-a$`).exec(turn.id)
    if (step !== null) steps.add(Number(step[1]))
    for (const block of turn.content) {
      if (block.type === 'tool_use') calls.add(block.id)
      if (block.type === 'tool_result') results.add(block.toolUseId)
    }
  }
  return { steps, calls, results }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

async function readView(dependencies: RouteDependencies, key: string): Promise<SessionView> {
  return restateCall(() => dependencies.ingress.client.client(sessionInterface, key).get({ limit: SNAPSHOT_TURNS }))
}

function servicesWaitMs(dependencies: RouteDependencies): number {
  return dependencies.config.servicesWaitMs ?? ADMISSION_WAIT_MS
}
