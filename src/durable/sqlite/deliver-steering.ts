import type { Agent, AgentStats } from '../../agent/types'
import { nextRunId } from '../../agent/run-lifecycle'
import type { SqliteRuntime } from './sqlite-runtime'

/** The part of an agent `deliverSteering` drives. */
export type SteerableAgent = Pick<Agent, 'run' | 'session'>

/**
 * Delivers the session's saved steering messages once the current run ended: each batch becomes the prompt of one
 * new run, handed to that run's id in the same commit, so a crash neither loses nor repeats a message. Returns the
 * stats of the runs it started (none when nothing was pending).
 */
export async function deliverSteering(agent: SteerableAgent, runtime: SqliteRuntime): Promise<AgentStats[]> {
  const delivered: AgentStats[] = []
  for (;;) {
    const session = await agent.session()
    const runId = nextRunId(session, runtime)
    const messages = await runtime.takeSteering(session.id, runId)
    if (messages.length === 0) return delivered
    delivered.push(await agent.run({ prompt: messages.map(message => message.text).join('\n\n'), runId }))
  }
}
