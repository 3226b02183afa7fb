import type { AgentStats } from '../../../agent/types'
import type { SqliteRuntime } from './sqlite-runtime'

/** The part of an agent `deliverSteering` drives. */
export interface SteerableAgent {
  run(options: { prompt: string; runId?: string }): Promise<AgentStats>
  session(): Promise<{ readonly id: string; readonly runs: ReadonlyArray<{ readonly label?: string }> }>
}

/**
 * Delivers the session's saved steering messages once the current run ended: each batch becomes the prompt of one
 * new run, handed to that run's id in the same commit, so a crash neither loses nor repeats a message. Returns the
 * stats of the runs it started (none when nothing was pending).
 */
export async function deliverSteering(agent: SteerableAgent, runtime: Pick<SqliteRuntime, 'takeSteering' | 'uuid'>): Promise<AgentStats[]> {
  const delivered: AgentStats[] = []
  for (;;) {
    const session = await agent.session()
    const ordinal = session.runs.filter(run => run.label === undefined).length + 1
    const runId = `run_${ordinal}_${runtime.uuid().replace(/-/g, '').slice(0, 10)}`
    const messages = await runtime.takeSteering(session.id, runId)
    if (messages.length === 0) return delivered
    delivered.push(await agent.run({ prompt: messages.map(message => message.text).join('\n\n'), runId }))
  }
}
