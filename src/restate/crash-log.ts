import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Where a Restate runtime counts, outside the journal, the attempts that ended while a step's closure ran (see
 * `RestateRuntimeOptions.crashGuard`): the process died (a crash, an out-of-memory kill) or the attempt was aborted,
 * and the step's result was never journaled. Restate cannot say it: it counts an invocation's failed attempts, not
 * which step each was in, and a crash fails the attempts of every invocation the process was running.
 */
export interface StepCrashLog {
  /** How many attempts ended while `step` of `invocationId` ran, its result never journaled. */
  crashes(invocationId: string, step: string): Promise<number>
  /** Records that the step's closure starts, `crashes` attempts having ended in it before: this one counts if it ends too. */
  starting(invocationId: string, step: string, crashes: number): Promise<void>
  /** Forgets the step once its result is journaled (a step never recorded is fine). */
  forget(invocationId: string, step: string): Promise<void>
}

/** Bytes past which an invocation's file is rewritten with only its running steps (the next time one starts). */
const COMPACT_AFTER_BYTES = 16 * 1024
/** How long an invocation's file stays after its last running step was forgotten: the next step usually follows. */
const REMOVE_AFTER_IDLE_MS = 1_000

/** What this process knows of one invocation's file: the steps it started and has not forgotten, and its clean-up timer. */
interface InvocationRecord { file: string; running: Set<string>; removal?: NodeJS.Timeout }

/**
 * A {@link StepCrashLog} of one small file per invocation in `folder`, appended to: `["S", step, count]` when a step
 * starts (`count` attempts, this one included, ran it without its result journaled) and `["F", step]` when it is
 * forgotten. A step's count is that of its last start, unless a forget follows it. Not synced: it has to outlive the
 * process, not the machine (a machine that dies forgets the counts, and they start again).
 *
 * A step costs two appends to a file that exists and a read of it, all synchronous: no file is created or removed
 * per step (creating and removing one per step cost ext4's directory journal 8 ms per 10-turn run under a burst).
 * The file goes once the invocation has had no running step in this process for a second, and is rewritten with only
 * its running steps when it grew past 16 KiB. Every replica that can run a retry of the invocation must see the same
 * folder: put it on the deployment's shared workspace volume.
 */
export function createFileCrashLog(folder: string): StepCrashLog {
  mkdirSync(folder, { recursive: true })
  const records = new Map<string, InvocationRecord>()
  const fileOf = (invocationId: string): string => records.get(invocationId)?.file ?? join(folder, createHash('sha256').update(invocationId).digest('hex').slice(0, 40))
  const recordOf = (invocationId: string): InvocationRecord => {
    let record = records.get(invocationId)
    if (!record) records.set(invocationId, record = { file: fileOf(invocationId), running: new Set() })
    return record
  }
  const scheduleRemoval = (invocationId: string, record: InvocationRecord): void => {
    clearTimeout(record.removal)
    record.removal = setTimeout(() => {
      if (record.running.size > 0) return
      records.delete(invocationId)
      removeIfThere(record.file)
    }, REMOVE_AFTER_IDLE_MS)
    record.removal.unref()
  }
  return {
    crashes: async (invocationId, step) => countsIn(fileOf(invocationId)).get(step) ?? 0,
    starting: async (invocationId, step, crashes) => {
      const record = recordOf(invocationId)
      clearTimeout(record.removal)
      record.running.add(step)
      compactIfLarge(record.file)
      appendFileSync(record.file, `${JSON.stringify(['S', step, crashes + 1])}\n`)
    },
    forget: async (invocationId, step) => {
      const record = records.get(invocationId)
      if (!record?.running.delete(step)) return
      appendFileSync(record.file, `${JSON.stringify(['F', step])}\n`)
      if (record.running.size === 0) scheduleRemoval(invocationId, record)
    },
  }
}

/** The steps `file` counts (started, not forgotten), each with its count; empty when there is no file. */
function countsIn(file: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of readText(file).split('\n')) {
    if (line.length === 0) continue
    let entry: unknown
    try { entry = JSON.parse(line) } catch { continue } // a line torn by the crash it records
    if (!Array.isArray(entry) || typeof entry[1] !== 'string') continue
    if (entry[0] === 'S' && typeof entry[2] === 'number' && entry[2] > 0) counts.set(entry[1], entry[2])
    else if (entry[0] === 'F') counts.delete(entry[1])
  }
  return counts
}

/** Rewrites `file` with only the steps it counts when it grew past {@link COMPACT_AFTER_BYTES} (written aside, then renamed). */
function compactIfLarge(file: string): void {
  let size: number
  try { size = statSync(file).size } catch { return }
  if (size <= COMPACT_AFTER_BYTES) return
  const lines = [...countsIn(file)].map(([step, count]) => `${JSON.stringify(['S', step, count])}\n`).join('')
  writeFileSync(`${file}.next`, lines)
  renameSync(`${file}.next`, file)
}

function removeIfThere(file: string): void {
  try {
    unlinkSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** The file's text, or '' when there is none. */
function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw error
  }
}

/**
 * One at a time in this process: the steps that an earlier attempt ended in. Run alone (among themselves), the one
 * running when the process dies again is the one counted; another run's step caught in the same crash waits its turn
 * instead of being counted with it. `waitMs` bounds the wait, after which the step runs anyway (a suspect that hangs
 * must not hold the others forever). Resolves with the release.
 */
export function takeSuspectTurn(waitMs: number): Promise<() => void> {
  const previous = suspectTail
  let release: () => void = () => undefined
  const mine = new Promise<void>(resolve => { release = resolve })
  suspectTail = previous.then(() => mine)
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })
  return Promise.race([previous, waited]).then(() => {
    clearTimeout(timer)
    return release
  })
}

let suspectTail: Promise<void> = Promise.resolve()
