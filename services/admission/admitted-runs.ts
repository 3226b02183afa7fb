/**
 * An invocation the admission started on a session and watches until it ends: a prompt's `run`, or for a steering
 * message the `deliver` sent after it (the session runs its invocations in order, so when that `deliver` ends every
 * run that could carry the message has ended).
 */
export interface AdmittedRun {
  sessionKey: string
  invocationId: string
  kind: 'prompt' | 'steering'
}

/**
 * The runs counted against the cap: per session, its prompts' runs, or one for its steering while it has none (the
 * messages of a session become at most one run of their own; with a prompt running they join it).
 */
export function countedRuns(runs: readonly AdmittedRun[]): number {
  const sessions = new Map<string, { prompts: number; steering: boolean }>()
  for (const run of runs) {
    const session = sessions.get(run.sessionKey) ?? { prompts: 0, steering: false }
    if (run.kind === 'prompt') session.prompts += 1
    else session.steering = true
    sessions.set(run.sessionKey, session)
  }
  let counted = 0
  for (const session of sessions.values()) counted += Math.max(session.prompts, session.steering ? 1 : 0)
  return counted
}

/**
 * Whether another admitted invocation of the session is ahead of `invocationId` (of any new one when it is undefined
 * or no longer listed): the run starts when those end.
 */
export function queuedAhead(runs: readonly AdmittedRun[], sessionKey: string, invocationId?: string): boolean {
  const position = runs.findIndex(run => run.invocationId === invocationId)
  const ahead = position === -1 ? runs : runs.slice(0, position)
  return ahead.some(run => run.sessionKey === sessionKey)
}
