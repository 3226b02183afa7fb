import { describe, expect, it } from 'vitest'
import { createSession } from '../../src/session/session'
import { createMemorySessionStore } from '../../src/session/memory-session-store'
import { EventRecorder, recordingSessionStore } from '../../src/session/session-events'
import type { NewSessionEvent } from '../../src/session/session-events'
import type { SessionRun } from '../../src/session/types'

const clock = { now: () => 5_000 }

/** A session whose store records its events, as the deployment's session object builds it. */
async function recordedSession(): Promise<{ events: NewSessionEvent[]; session: Awaited<ReturnType<typeof createSession>> }> {
  const events: NewSessionEvent[] = []
  const store = recordingSessionStore(createMemorySessionStore(), new EventRecorder({ depth: 0 }), batch => { events.push(...batch) })
  const session = await createSession({ id: 's', store, clock })
  return { events, session }
}

const running: SessionRun = { id: 'run_1', status: 'running', prompt: 'go', startedAt: 1_000, depth: 0 }

describe('the event recorder', () => {
  it('reports the end of a cancelled run, which the heal of its open calls first marks interrupted', async () => {
    const { events, session } = await recordedSession()
    await session.setStatus('running')
    await session.upsertRun(running)
    await session.appendTurns([{ id: 'run_1-t1-a', runId: 'run_1', role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'shell', input: { command: 'sleep 100' } }], createdAt: 1_100 }])
    // What the services' clean-up does when a run is cancelled: close its open calls, then record the ending.
    await session.healInterruptedToolCalls('[Tool use failed] cancelled', 'run_1')
    await session.upsertRun({ ...running, status: 'cancelled', endedAt: 2_000, error: 'cancelled' })
    await session.setStatus('cancelled')
    const ends = events.filter(event => event.type === 'run:end')
    expect(ends).toHaveLength(1)
    expect(ends[0]).toMatchObject({ at: 2_000, data: { runId: 'run_1', status: 'cancelled', error: 'cancelled' } })
  })

  it('reports a run that ran again after it ended (a resumed suspension) when it ends again, and only then', async () => {
    const { events, session } = await recordedSession()
    await session.upsertRun(running)
    await session.upsertRun({ ...running, status: 'suspended', endedAt: 1_500 })
    await session.upsertRun({ ...running, status: 'suspended', endedAt: 1_500, text: 'rewritten, still suspended' })
    await session.upsertRun({ ...running, status: 'running' })
    await session.upsertRun({ ...running, status: 'completed', endedAt: 2_500 })
    expect(events.filter(event => event.type === 'run:start')).toHaveLength(1)
    expect(events.filter(event => event.type === 'run:end').map(event => event.data.status)).toEqual(['suspended', 'completed'])
  })
})
