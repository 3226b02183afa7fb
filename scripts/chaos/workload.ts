/** The kinds of session a chaos run keeps going: each uses other parts of the runtime. */
export type SessionKind = 'tools' | 'question' | 'spawn'

/** One session of the workload and what became of it. */
export interface SessionRecord {
  id: string
  kind: SessionKind
  prompt: string
  /** Turns the run must have when it completes (one per directive, plus the final answer). */
  expectedTurns: number
  /** A text the final answer must contain (the file read back, the bot's answer, the children's answers). */
  expectedText: string[]
  startedAt: number
  endedAt?: number
  status?: string
  /** Assistant messages of the session's own run (one per model turn), and the run's own count of turns. */
  turns?: number
  runTurns?: number
  /** Turn ids that appear more than once in the session (a turn appended twice). */
  duplicateTurnIds?: string[]
  text?: string
  /** The bot's answer, when the run asked; `answerStatuses` are the HTTP statuses of its posts. */
  answer?: string
  answerStatuses: number[]
  /** Last error while driving it (a gateway down, a timeout). */
  lastError?: string
}

/** The prompt of session `id`: directives of the demo model, with the id in them so each model step is unique. */
export function sessionPrompt(id: string, kind: SessionKind, ledgerFile: string): Pick<SessionRecord, 'prompt' | 'expectedTurns' | 'expectedText'> {
  switch (kind) {
    case 'tools':
      return {
        prompt: [`shell: echo ${id} >> ${ledgerFile}`, `todo: ${id} first | ${id} second`, 'todos:', `write: notes.txt ${id} was here`, 'read: notes.txt'].join('\n'),
        expectedTurns: 6,
        expectedText: [`${id} was here`, `${id} second`],
      }
    case 'question':
      return { prompt: `ask: ${id} which colour?`, expectedTurns: 2, expectedText: [`You said: ${id}-answer`] }
    case 'spawn':
      return { prompt: `spawn: ${id}-a | ${id}-b`, expectedTurns: 2, expectedText: [`Echo: ${id}-a`, `Echo: ${id}-b`] }
  }
}

/** A client of the gateway front door that retries what a kill interrupts (the request is idempotent or a read). */
export interface GatewayClient {
  request(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: unknown }>
}

/**
 * A client with `apiKey` for `baseUrl`; a connection error or a 5xx is retried for up to `patienceMs`, or until
 * `stopped()` says the run is over.
 */
export function gatewayClient(baseUrl: string, apiKey: string, patienceMs = 60_000, stopped: () => boolean = () => false): GatewayClient {
  return {
    async request(path, init = {}) {
      const deadline = Date.now() + patienceMs
      let lastError = 'no attempt'
      while (Date.now() < deadline && !stopped()) {
        try {
          const response = await fetch(path.startsWith('http') ? path : `${baseUrl}${path}`, {
            method: init.method ?? 'GET',
            headers: { authorization: `Bearer ${apiKey}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
            ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
            signal: AbortSignal.timeout(15_000),
          })
          const text = await response.text()
          if (response.status < 500) return { status: response.status, body: text ? JSON.parse(text) as unknown : undefined }
          lastError = `${response.status} ${text.slice(0, 200)}`
        } catch (error) {
          lastError = error instanceof Error ? error.message : String(error)
        }
        await new Promise(resolve => setTimeout(resolve, 250))
      }
      throw new Error(`${init.method ?? 'GET'} ${path}: gave up after ${patienceMs} ms (${lastError})`)
    },
  }
}

interface TurnView { id: string; runId: string; role: string }
interface RunView { id: string; label?: string; text?: string; totals?: { turns?: number } }
interface SessionView { status?: string; turns?: TurnView[]; pending?: Array<{ answerUrl?: string }>; runs?: RunView[] }

const FINAL_STATUSES = new Set(['completed', 'failed', 'cancelled', 'limit', 'max_turns', 'error'])

/** Records what the ended session holds: its run's turns, their ids, the final text. */
function recordOutcome(record: SessionRecord, view: SessionView): void {
  const run = (view.runs ?? []).find(each => each.label === undefined)
  const turns = view.turns ?? []
  record.turns = turns.filter(turn => turn.runId === run?.id && turn.role === 'assistant').length
  if (run?.totals?.turns !== undefined) record.runTurns = run.totals.turns
  const seen = new Set<string>()
  record.duplicateTurnIds = turns.filter(turn => seen.has(turn.id) || !seen.add(turn.id)).map(turn => turn.id)
  if (run?.text !== undefined) record.text = run.text
}

/**
 * Drives one session to its end: sends the prompt (with an idempotency key, so a retry after a gateway kill starts it
 * once), answers its question through the answer link like a bot, and polls until the run ends or `deadline` passes.
 */
export async function driveSession(client: GatewayClient, record: SessionRecord, deadline: () => number): Promise<void> {
  const sent = await client.request(`/v1/sessions/${record.id}/prompts`, { method: 'POST', body: { prompt: record.prompt }, headers: { 'idempotency-key': `chaos-${record.id}` } })
  if (sent.status !== 202 && sent.status !== 200) throw new Error(`prompt of ${record.id}: ${sent.status} ${JSON.stringify(sent.body)}`)
  while (Date.now() < deadline()) {
    await new Promise(resolve => setTimeout(resolve, 400))
    const read = await client.request(`/v1/sessions/${record.id}`).catch((error: unknown) => { record.lastError = String(error); return undefined })
    if (!read || read.status !== 200) continue
    const view = read.body as SessionView
    const pending = view.pending?.[0]
    if (pending?.answerUrl && record.answer === undefined) await answer(client, record, pending.answerUrl)
    if (view.status && FINAL_STATUSES.has(view.status)) {
      record.status = view.status
      recordOutcome(record, view)
      record.endedAt = Date.now()
      return
    }
  }
}

async function answer(client: GatewayClient, record: SessionRecord, answerUrl: string): Promise<void> {
  const value = `${record.id}-answer`
  const posted = await client.request(answerUrl, { method: 'POST', body: { answer: value } }).catch((error: unknown) => { record.lastError = String(error); return undefined })
  if (!posted) return
  record.answerStatuses.push(posted.status)
  // 200 answered, 202 accepted while the services are down, 409 when an earlier (retried) post already answered it.
  if (posted.status === 200 || posted.status === 202 || posted.status === 409) record.answer = value
}
