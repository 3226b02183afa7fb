import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
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

/**
 * A {@link StepCrashLog} of one small file per running step in `folder`, holding its count. Not synced: it has to
 * outlive the process, not the machine (a machine that dies forgets the counts, and they start again). Its file calls
 * are synchronous: about 20 µs a step on a local disk, where going through the thread pool took 200–350 µs on a busy
 * machine. Every replica that can run a retry of the invocation must see the same folder: put it on the deployment's
 * shared workspace volume.
 */
export function createFileCrashLog(folder: string): StepCrashLog {
  mkdirSync(folder, { recursive: true })
  const fileOf = (invocationId: string, step: string): string => join(folder, createHash('sha256').update(`${invocationId}\0${step}`).digest('hex').slice(0, 40))
  return {
    crashes: async (invocationId, step) => {
      const count = Number.parseInt(readCount(fileOf(invocationId, step)), 10)
      return Number.isFinite(count) && count > 0 ? count : 0
    },
    starting: async (invocationId, step, crashes) => { writeFileSync(fileOf(invocationId, step), String(crashes + 1)) },
    forget: async (invocationId, step) => { removeIfThere(fileOf(invocationId, step)) },
  }
}

function removeIfThere(file: string): void {
  try {
    unlinkSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** The file's text, or '0' when there is none (checked first: most steps have none, and a thrown ENOENT costs more). */
function readCount(file: string): string {
  if (!existsSync(file)) return '0'
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '0'
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
