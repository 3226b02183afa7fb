/**
 * What this process saw of the attempts that journaled an at-most-once step's intent themselves: whether such an
 * attempt stopped (suspended, aborted, lost its connection) before it issued the step's effect. A later attempt that
 * finds the intent in the journal cannot tell that case from an attempt killed as the effect started, so it reports
 * the step interrupted; when it runs in the process that saw the earlier attempt stop first, it runs the step instead.
 * Only a hint that relaxes the journal's answer: a retry on another replica, or after this process died, gets the
 * journal's answer.
 */
interface IntentMark {
  readonly attempt: object
  readonly recordedAtMs: number
  stopped: boolean
  /** Resolves once the mark is stopped or gone. */
  readonly settled: Promise<void>
  readonly settle: () => void
}

const marks = new Map<string, IntentMark>()

/** Marks of attempts whose next attempt ran elsewhere are dropped after this long. */
const MARK_TTL_MS = 10 * 60_000

/** How long a later attempt waits for a still-running earlier attempt of this process to stop or issue the effect. */
export const DEFAULT_STOP_WAIT_MS = 5_000

/** Records that `attempt` journaled the intent `key` (`<invocation id>\0<step name>`) itself. */
export function intentRecorded(key: string, attempt: object): void {
  const now = performance.now()
  for (const [other, mark] of marks) if (now - mark.recordedAtMs > MARK_TTL_MS) forget(other, mark)
  const previous = marks.get(key)
  if (previous) forget(key, previous)
  let settle = (): void => undefined
  const settled = new Promise<void>(resolve => { settle = resolve })
  marks.set(key, { attempt, recordedAtMs: now, stopped: false, settled, settle })
}

/** `attempt` issues the effect of `key`: from now on it may have started. */
export function effectIssued(key: string, attempt: object): void {
  const mark = marks.get(key)
  if (mark?.attempt === attempt) forget(key, mark)
}

/** `attempt` ended without issuing the effect of `key`: the effect never started. */
export function attemptStopped(key: string, attempt: object): void {
  const mark = marks.get(key)
  if (mark?.attempt !== attempt) return
  mark.stopped = true
  mark.settle()
}

/**
 * True when an attempt of this process journaled the intent `key` and stopped before it issued the effect; the mark
 * is taken (the caller runs the effect, so no later attempt may rely on it). An earlier attempt still running is waited
 * for, at most `waitMs`.
 */
export async function stoppedBeforeEffect(key: string, waitMs = DEFAULT_STOP_WAIT_MS): Promise<boolean> {
  const mark = marks.get(key)
  if (!mark) return false
  if (!mark.stopped) await waitAtMost(mark.settled, waitMs)
  if (marks.get(key) !== mark || !mark.stopped) return false
  marks.delete(key)
  return true
}

function forget(key: string, mark: IntentMark): void {
  marks.delete(key)
  mark.settle()
}

async function waitAtMost(promise: Promise<void>, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([promise, new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })])
  clearTimeout(timer)
}
