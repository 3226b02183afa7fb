import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer } from '../../support/anthropic-server'
import { demoAnswer, modelStepKey } from '../../support/demo-wire-model'

/** One model request as the model server saw it: which step (prompt and turn) and when. */
export interface ModelRequestEntry {
  /** `<prompt>#<turn>`: the run's (or child's) prompt and how many turns came before. */
  key: string
  /** The first line of the prompt: the session (or child task) it belongs to. */
  owner: string
  at: number
  /** The SDK's `x-stainless-retry-count`: above 0 when the provider retried a request that failed (one step). */
  retryCount?: number
}

/** The model server of a chaos run and its request log, which lives outside every process under test. */
export interface ModelLedger {
  readonly url: string
  readonly apiKey: string
  readonly entries: ModelRequestEntry[]
  close(): Promise<void>
}

/**
 * The owner of a model step: the session id `c<n>` in its prompt (`shell: echo c7 >> …`, `ask: c8 …`,
 * `spawn: c9-a | c9-b`), or `c<n>-a` / `c<n>-b` for a child, whose prompt is its task.
 */
export function ownerOf(key: string): string {
  if (key.startsWith('spawn:')) return /\b(c\d+)-a\b/.exec(key)?.[1] ?? key
  return /\b(c\d+(?:-[ab])?)\b/.exec(key)?.[1] ?? key
}

/** Starts the Messages-API model server (the demo model behind the real wire) and records every request. */
export async function startModelLedger(): Promise<ModelLedger> {
  const apiKey = 'sk-ant-chaos'
  const server: FakeAnthropicServer = await start({ apiKey })
  const entries: ModelRequestEntry[] = []
  server.setHandler(async request => {
    const key = modelStepKey(request)
    entries.push({ key, owner: ownerOf(key), at: Date.now(), retryCount: request.retryCount ?? 0 })
    return demoAnswer(request)
  })
  return { url: server.url, apiKey, entries, close: () => server.close() }
}
