import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface View { status: string; pending: Array<{ id: string }>; runs: Array<{ text?: string; limits?: { maxTurns?: number } }> }
/** Every file called `name` under `folder`. */
function filesNamed(folder: string, name: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter(entry => entry.split('/').at(-1) === name).map(entry => join(folder, entry))
}

interface FailureRow { id: string; last_failure_error_code: string | null; last_failure: string | null }

/**
 * An operator changes the services' settings while a run waits on a person: the services restart with a lower turn
 * limit and a deny-list (which puts an approval decision before every tool call). Every run journals the settings it
 * started with, so its next attempt replays the same commands, the answer completes it, and its record keeps the limit it started with. (Without the journaled settings, the same change
 * makes the replay issue a `decision` step where the journal holds the question: Restate refuses it, RT0016.)
 */
describe('a run keeps the settings it started with across a restart with changed settings', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ ZIDANE_INACTIVITY_TIMEOUT_MS: '1000', ZIDANE_MAX_TURNS: '20' }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  const view = async (sessionId: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as View) : undefined
  }
  const rows = async <T>(query: string): Promise<T[]> => {
    const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query }) })
    return ((await response.json()) as { rows: T[] }).rows
  }
  const mismatches = async (): Promise<FailureRow[]> => {
    const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: "SELECT id, last_failure_error_code, last_failure FROM sys_invocation WHERE last_failure_error_code IN ('RT0016', '570') OR last_failure LIKE '%mismatch%'" }) })
    return ((await response.json()) as { rows: FailureRow[] }).rows
  }

  it('a question answered after the restart completes the run; no journal mismatch', async () => {
    expect((await s().request('/v1/sessions/pinned/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'ask: which colour?' }) })).status).toBe(202)
    const question = await waitFor(async () => (await view('pinned'))?.pending[0], 40_000, 'the question')
    await s().services().stop()
    s().services().restart({ ZIDANE_MAX_TURNS: '5', ZIDANE_DENY_TOOLS: 'write_file' })
    const answered = await s().request(`/v1/awakeables/${encodeURIComponent(question.id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'teal' }) })
    expect(answered.status).toBeLessThan(300)
    const done = await waitFor(async () => {
      if ((await mismatches()).length > 0) throw Object.assign(new Error('journal mismatch'), { fatal: true })
      const current = await view('pinned')
      return current?.status === 'completed' ? current : undefined
    }, 40_000, 'the run to complete').catch(async (error: unknown) => { throw new Error(`${String(error)}; mismatches: ${JSON.stringify(await mismatches())}`) })
    expect(done.runs.at(-1)?.text).toBe('You said: teal')
    expect(done.runs.at(-1)?.limits?.maxTurns).toBe(20)
    expect(await mismatches()).toEqual([])
  }, 120_000)

  it('a run started after the restart gets the changed settings', async () => {
    const response = await s().request('/v1/sessions/after-change/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'hello' }) })
    expect(response.status).toBe(200)
    const after = await waitFor(async () => { const current = await view('after-change'); return current?.status === 'completed' ? current : undefined }, 40_000, 'the later run')
    expect(after.runs.at(-1)?.limits?.maxTurns).toBe(5)
  }, 60_000)

  it('the operator\'s deny-list holds in the sub-agents of a run: a child\'s write_file is refused', async () => {
    const response = await s().request('/v1/sessions/child-deny/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'spawn: write: from-child.txt hello' }) })
    expect(response.status).toBe(200)
    const { text } = (await response.json()) as { text: string }
    expect(text).toContain('Children answered:')
    expect(text).toContain('policy denies this tool')
    expect(filesNamed(s().dataDir, 'from-child.txt')).toEqual([])
  }, 60_000)

  it('a steered message no run took runs with journaled settings and the derived event log, like a prompt', async () => {
    expect((await s().request('/v1/sessions/steered/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'hello' }) })).status).toBe(200)
    expect((await s().request('/v1/sessions/steered/messages', { method: 'POST', body: JSON.stringify({ text: 'and then?' }) })).status).toBe(202)
    const done = await waitFor(async () => { const current = await view('steered'); return current?.status === 'completed' && current.runs.length === 2 ? current : undefined }, 40_000, 'the steered run')
    expect(done.runs.at(-1)?.limits?.maxTurns).toBe(5)
    const [delivery] = await rows<{ id: string }>(`SELECT id FROM sys_invocation WHERE target_service_name = 'session' AND target_handler_name = 'deliver' AND target_service_key LIKE '%~steered'`)
    const steps = await rows<{ name: string }>(`SELECT name FROM sys_journal WHERE id = '${delivery?.id ?? ''}' AND entry_type = 'Command: Run'`)
    expect(steps.map(step => step.name)).toContain('settings')
    const sends = await rows<{ name: string }>(`SELECT name FROM sys_journal WHERE id = '${delivery?.id ?? ''}' AND entry_type = 'Command: OneWayCall'`)
    // The inbox watch, the run's one journaled sync and the session index's updates at its start and end: nothing per write.
    expect(sends.length).toBeLessThanOrEqual(4)
  }, 60_000)
})
