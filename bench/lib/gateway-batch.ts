import { sleepMs } from './stats'

/** Where a batch is sent: a stack's gateway and the API key it accepts. */
export interface GatewayTarget { gatewayUrl: string; apiKey: string }

/** How long a run may take before the batch counts it failed (a stuck stack ends the batch instead of hanging it). */
const RUN_TIMEOUT_MS = 300_000

/** One batch of sessions through a gateway: wall time from the first send to the last answer, and each run's latency. */
export interface GatewayBatch { wallMs: number; completed: number; sessions: number; runMs: number[]; failures: string[] }

/**
 * Starts one run per id (`POST /v1/sessions/{id}/prompts?wait=true`), `startIntervalMs` apart (0: all at once, an
 * open loop otherwise: a slow answer never delays the next send), and waits for every answer.
 */
export async function runGatewayBatch(target: GatewayTarget, ids: readonly string[], prompt: string, startIntervalMs: number): Promise<GatewayBatch> {
  const headers = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' }
  const send = async (id: string, index: number): Promise<{ ok: boolean; status: string; runMs: number }> => {
    if (startIntervalMs > 0) await sleepMs(index * startIntervalMs)
    const sent = performance.now()
    try {
      const response = await fetch(`${target.gatewayUrl}/v1/sessions/${id}/prompts?wait=true`, { method: 'POST', headers, body: JSON.stringify({ prompt }), signal: AbortSignal.timeout(RUN_TIMEOUT_MS) })
      const body = (await response.json().catch(() => ({}))) as { status?: string; error?: { code: string } }
      return { ok: response.ok && body.status === 'completed', status: body.status ?? body.error?.code ?? String(response.status), runMs: performance.now() - sent }
    } catch (error) {
      const status = error instanceof Error && error.name === 'TimeoutError' ? `no answer in ${RUN_TIMEOUT_MS} ms` : String(error)
      return { ok: false, status, runMs: performance.now() - sent }
    }
  }
  const started = performance.now()
  const outcomes = await Promise.all(ids.map(send))
  const wallMs = performance.now() - started
  const failures = [...new Set(outcomes.filter(outcome => !outcome.ok).map(outcome => outcome.status))]
  return { wallMs, completed: outcomes.filter(outcome => outcome.ok).length, sessions: ids.length, runMs: outcomes.map(outcome => outcome.runMs), failures }
}

/** Completed sessions per minute of a batch (from its first send to its last answer). */
export function sessionsPerMinute(batch: GatewayBatch): number {
  return (batch.completed / batch.wallMs) * 60_000
}

/** The assistant turns of a session as the gateway shows it (`GET /v1/sessions/{id}`). */
export async function assistantTurns(target: GatewayTarget, id: string): Promise<number> {
  const response = await fetch(`${target.gatewayUrl}/v1/sessions/${id}`, { headers: { authorization: `Bearer ${target.apiKey}` } })
  const view = (await response.json()) as { turns?: Array<{ role: string }> }
  return (view.turns ?? []).filter(turn => turn.role === 'assistant').length
}
