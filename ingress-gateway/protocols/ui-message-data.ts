import type { ChildActivityItem, ChildEndItem, ChildStartItem, QuestionItem, RunTotals } from './timeline-items'

/** The `data` of a `data-subagent` part: one per sub-agent (part id = its run id), replaced as it progresses. */
export interface SubagentData {
  label: string
  depth: number
  task: string
  /** `running` until its end, then the sub-agent run's status (`completed`, `failed`, …). */
  status: string
  totals?: RunTotals
  lastActivity?: { event: ChildActivityItem['event']; tool?: string; isError?: boolean; text?: string }
}

/** The `data` of a `data-question` part (part id = the question id): what to show and the link that answers it. */
export interface QuestionData {
  id: string
  kind: 'ask_user' | 'present_plan' | 'approval'
  question: string
  options: string[]
  callId: string | null
  answerUrl: string
}

/** A data part that later chunks with the same id replace (`data-subagent`, `data-question`). */
export interface DataChunk { type: `data-${string}`; id: string; data: unknown }

/** Longest text of a sub-agent's last activity a `data-subagent` part carries. */
const ACTIVITY_TEXT_CHARS = 200

/** Folds a sub-agent item into its part's data (`previous` undefined when this stream did not see it start). */
export function subagentData(previous: SubagentData | undefined, item: ChildStartItem | ChildActivityItem | ChildEndItem): SubagentData {
  const base: SubagentData = previous ?? { label: item.label, depth: item.depth, task: '', status: 'running' }
  if (item.type === 'child-start') return { ...base, task: item.task, status: 'running' }
  if (item.type === 'child-end') return { ...base, status: item.status, ...(item.totals === undefined ? {} : { totals: item.totals }) }
  return { ...base, lastActivity: activitySummary(item) }
}

function activitySummary(item: ChildActivityItem): NonNullable<SubagentData['lastActivity']> {
  const { name, isError, text } = item.data
  return {
    event: item.event,
    ...(typeof name === 'string' && name !== '' ? { tool: name } : {}),
    ...(typeof isError === 'boolean' ? { isError } : {}),
    ...(typeof text === 'string' && text !== '' ? { text: text.slice(0, ACTIVITY_TEXT_CHARS) } : {}),
  }
}

/** The `data-question` chunk of a question the run waits on (not an approval: those are tool approval requests). */
export function questionChunk(item: QuestionItem): DataChunk {
  const { question } = item
  const data: QuestionData = {
    id: question.id, kind: question.kind, question: question.question, options: question.options ?? [],
    callId: question.callId ?? null, answerUrl: question.answerUrl,
  }
  return { type: 'data-question', id: question.id, data }
}

/** An approval's tool input as the session lists it (JSON text, maybe cut): parsed when whole, else `{ preview }`. */
export function approvalInput(input: string | undefined): unknown {
  if (input === undefined) return {}
  try {
    return JSON.parse(input) as unknown
  } catch {
    return { preview: input }
  }
}
