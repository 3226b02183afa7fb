import { createHash } from 'node:crypto'
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
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

/** Bytes past which an invocation's file is rewritten with only the steps it counts (the next time one starts). */
const COMPACT_AFTER_BYTES = 16 * 1024
/** How long an invocation's file stays after its last counted step was forgotten: the next step usually follows. */
const REMOVE_AFTER_IDLE_MS = 1_000
/**
 * How long an invocation's file stays open while it counts steps but none starts or is forgotten here: an attempt
 * aborted as its step ran never forgets it (its retry may run elsewhere), and a long step forgets it late.
 */
const CLOSE_AFTER_IDLE_MS = 30_000
/**
 * Files kept open at once: past it, opening one closes the one opened the longest ago (kept on disk, read again at its
 * next use), so a burst of invocations cannot take the process's descriptors (often 1,024).
 */
const MAX_OPEN_FILES = 256

/**
 * What this process knows of one invocation's file: the counts it read from it when it opened it and has written
 * since, its descriptor (appends), the bytes in it and the timer that closes it.
 */
interface InvocationRecord { file: string; fd: number; bytes: number; counts: Map<string, number>; idle?: NodeJS.Timeout }

/**
 * A {@link StepCrashLog} of one small file per invocation in `folder`, appended to: `["S", step, count]` when a step
 * starts (`count` attempts, this one included, ran it without its result journaled) and `["F", step]` when it is
 * forgotten. A step's count is that of its last start, unless a forget follows it. Not synced: it has to outlive the
 * process, not the machine (a machine that dies forgets the counts, and they start again).
 *
 * The process reads an invocation's file once, when a step of it first starts here, keeps the counts and the file
 * open while the invocation runs steps here, and appends; a step then costs two `write(2)`s, and no file is created
 * or removed per step (creating and removing one per step cost ext4's directory journal 8 ms per 10-turn run under a
 * burst). The file is closed and removed once it has counted no step for a second (a retry elsewhere reads the file
 * before that only if it starts within that second), closed and kept once no step of it started or was forgotten here
 * for 30 s (an aborted attempt's step, a long one: its forget reads the file again), and rewritten with only its
 * counted steps when it grew past 16 KiB. Each use checks with two `stat(2)`s that the file is as this process left
 * it: one another replica wrote since (a retry of the invocation there) is read again, and never removed from here.
 * Every replica that can run a retry of the invocation must see the same folder: put it on the deployment's shared
 * workspace volume.
 */
export function createFileCrashLog(folder: string): StepCrashLog {
  mkdirSync(folder, { recursive: true })
  const records = new Map<string, InvocationRecord>()
  const fileOf = (invocationId: string): string => join(folder, createHash('sha256').update(invocationId).digest('hex').slice(0, 40))
  /**
   * The record of the invocation while its file is as this process left it; one another process appended to,
   * rewrote or removed since (a retry of the invocation on another replica) is closed and dropped, to be read again.
   */
  const current = (invocationId: string): InvocationRecord | undefined => {
    const record = records.get(invocationId)
    if (record === undefined || isAsLeft(record)) return record
    clearTimeout(record.idle)
    records.delete(invocationId)
    closeSync(record.fd)
    return undefined
  }
  const open = (invocationId: string, content = readContent(fileOf(invocationId))): InvocationRecord => {
    let record = current(invocationId)
    if (record) return record
    const file = fileOf(invocationId)
    if (records.size >= MAX_OPEN_FILES) closeOldest()
    // Its size in bytes as read: a write torn inside a character does not decode to as many.
    record = { file, fd: openSync(file, 'a'), bytes: content.length, counts: countsOf(content.toString('utf8')) }
    records.set(invocationId, record)
    // A last line without its end (a crash tore its write) would swallow the next start: it is ended first.
    if (content.length > 0 && content.at(-1) !== 10) {
      writeSync(record.fd, '\n')
      record.bytes += 1
    }
    return record
  }
  /**
   * Closes the file opened the longest ago: kept while it counts a step (read again at its next use), removed when it
   * counts none and is as this process left it, as its idle timer would have.
   */
  const closeOldest = (): void => {
    const [invocationId, record] = records.entries().next().value ?? []
    if (invocationId === undefined || record === undefined) return
    clearTimeout(record.idle)
    const removable = record.counts.size === 0 && isAsLeft(record)
    records.delete(invocationId)
    closeSync(record.fd)
    if (removable) removeIfThere(record.file)
  }
  /** The record of a file closed while it counted `step`, opened again; undefined when the file does not count it. */
  const reopened = (invocationId: string, step: string): InvocationRecord | undefined => {
    const content = readContent(fileOf(invocationId))
    return countsOf(content.toString('utf8')).has(step) ? open(invocationId, content) : undefined
  }
  const append = (record: InvocationRecord, entry: unknown[]): void => {
    const line = `${JSON.stringify(entry)}\n`
    writeSync(record.fd, line)
    record.bytes += Buffer.byteLength(line)
  }
  /** Closes the record's file after its idle time: removed when it counts no step, else kept for a retry to read. */
  const closeWhenIdle = (invocationId: string, record: InvocationRecord): void => {
    clearTimeout(record.idle)
    const counting = record.counts.size > 0
    record.idle = setTimeout(() => {
      // Another process appending to the file since counts there: it is left to that process.
      const asLeft = isAsLeft(record)
      records.delete(invocationId)
      closeSync(record.fd)
      if (!counting && asLeft) removeIfThere(record.file)
    }, counting ? CLOSE_AFTER_IDLE_MS : REMOVE_AFTER_IDLE_MS)
    record.idle.unref()
  }
  return {
    crashes: async (invocationId, step) => (current(invocationId)?.counts ?? countsOf(readContent(fileOf(invocationId)).toString('utf8'))).get(step) ?? 0,
    starting: async (invocationId, step, crashes) => {
      const record = open(invocationId)
      record.counts.set(step, crashes + 1)
      if (record.bytes > COMPACT_AFTER_BYTES) compact(record)
      append(record, ['S', step, crashes + 1])
      closeWhenIdle(invocationId, record)
    },
    forget: async (invocationId, step) => {
      const record = current(invocationId) ?? reopened(invocationId, step)
      if (!record?.counts.delete(step)) return
      append(record, ['F', step])
      closeWhenIdle(invocationId, record)
    },
  }
}

/** Whether the record's file is still at its path, holding what this process wrote and read of it (no more). */
function isAsLeft(record: InvocationRecord): boolean {
  const mine = fstatSync(record.fd)
  const there = statSync(record.file, { throwIfNoEntry: false })
  return there !== undefined && there.ino === mine.ino && there.dev === mine.dev && mine.size === record.bytes
}

/** Rewrites the record's file with only the steps it counts (written aside, then renamed over it), and reopens it. */
function compact(record: InvocationRecord): void {
  const lines = [...record.counts].map(([step, count]) => `${JSON.stringify(['S', step, count])}\n`).join('')
  writeFileSync(`${record.file}.next`, lines)
  renameSync(`${record.file}.next`, record.file)
  closeSync(record.fd)
  record.fd = openSync(record.file, 'a')
  record.bytes = Buffer.byteLength(lines)
}

/** The steps a file's text counts (started, not forgotten), each with its count. */
function countsOf(text: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line.length === 0) continue
    let entry: unknown
    try { entry = JSON.parse(line) } catch { continue } // a line torn by the crash it records
    if (!Array.isArray(entry) || typeof entry[1] !== 'string') continue
    if (entry[0] === 'S' && typeof entry[2] === 'number' && entry[2] > 0) counts.set(entry[1], entry[2])
    else if (entry[0] === 'F') counts.delete(entry[1])
  }
  return counts
}

function removeIfThere(file: string): void {
  try {
    unlinkSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** The file's bytes, none when there is no file. */
function readContent(file: string): Buffer {
  try {
    return readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0)
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
