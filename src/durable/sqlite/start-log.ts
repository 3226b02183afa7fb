import { closeSync, ftruncateSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'

/** Bytes of stale lines (steps since recorded) a log keeps before it is truncated at a moment nothing is in flight. */
const TRUNCATE_AFTER_BYTES = 64 * 1024

/** The start log of `owner` next to the sessions file at `dbPath` (like SQLite's own `-wal` and `-shm` files). */
export function startLogPath(dbPath: string, owner: string): string {
  return `${dbPath}-starts-${owner}`
}

/**
 * The names of the steps of root run `root` that the log at `path` says were started, in order. Lines a writer
 * was cut off in the middle of (a torn last line) are skipped.
 */
export function readStartLog(path: string, root: string): string[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return []
  }
  const names: string[] = []
  for (const line of text.split('\n')) {
    if (line.length === 0) continue
    try {
      const entry = JSON.parse(line) as unknown
      if (Array.isArray(entry) && entry[0] === root && typeof entry[1] === 'string') names.push(entry[1])
    } catch { /* torn line */ }
  }
  return names
}

/** Removes a start log nobody needs any more (its owner is gone and has no unfinished run left). */
export function removeStartLog(path: string): void {
  try { unlinkSync(path) } catch { /* already gone */ }
}

/**
 * This runtime's start log: an append-only file of `[root, name]` lines, one per step whose `execute` begins,
 * written with one `write(2)` and no commit. A line is in the kernel once `write` returns, so it survives a
 * SIGKILL of this process exactly as a WAL commit at `synchronous=NORMAL` does (an OS crash may lose it). The
 * process that claims one of our runs after we died reads it (see `createSqliteRunLedger`).
 *
 * The log keeps "live" markers in memory: steps started and not recorded (in flight, or stopped by a throw, which
 * like the in-memory reference runtime still counts as started). The file is truncated once nothing is live and
 * it grew past a few KiB, and rewritten with only the live markers when a run's markers become void (a clean
 * suspend), so a later reader never sees a marker from before a clean suspension.
 */
export class StartLog {
  private fd: number | undefined
  private bytes = 0
  private readonly live = new Map<string, Set<string>>()
  /** Roots with lines in the file since its last truncation. */
  private readonly rootsInFile = new Set<string>()

  constructor(readonly path: string) {}

  /** Whether this runtime itself started `name` earlier and has not recorded it. */
  isLive(root: string, name: string): boolean {
    return this.live.get(root)?.has(name) === true
  }

  /** Appends the marker of `name` (before its `execute` runs). */
  started(root: string, name: string): void {
    const line = `${JSON.stringify([root, name])}\n`
    this.fd ??= openSync(this.path, 'a')
    writeSync(this.fd, line)
    this.bytes += Buffer.byteLength(line)
    this.rootsInFile.add(root)
    let names = this.live.get(root)
    if (!names) this.live.set(root, names = new Set())
    names.add(name)
  }

  /** The step's result is committed: its marker is no longer needed. */
  recorded(root: string, name: string): void {
    const names = this.live.get(root)
    if (!names?.delete(name)) return
    if (names.size === 0) this.live.delete(root)
    if (this.live.size === 0 && this.bytes > TRUNCATE_AFTER_BYTES) this.truncate()
  }

  /** The run's markers are void (it suspended cleanly or ended): drop them from memory and from the file. */
  forget(root: string): void {
    this.live.delete(root)
    if (!this.rootsInFile.has(root) || this.fd === undefined) return
    if (this.live.size === 0) {
      this.truncate()
      return
    }
    // Rare: other runs of this process are in flight. Rewrite the file with only their markers, atomically.
    const lines = [...this.live].flatMap(([liveRoot, names]) => [...names].map(name => `${JSON.stringify([liveRoot, name])}\n`)).join('')
    const next = `${this.path}.next`
    writeFileSync(next, lines)
    closeSync(this.fd)
    renameSync(next, this.path)
    this.fd = openSync(this.path, 'a')
    this.bytes = Buffer.byteLength(lines)
    this.rootsInFile.clear()
    for (const liveRoot of this.live.keys()) this.rootsInFile.add(liveRoot)
  }

  /**
   * Closes the file. `clean`: the process is shutting down normally; the file is removed unless a marker is still
   * live (a run left unfinished, which the next process must be able to read). Not clean: kept, as a crash would.
   */
  close(clean: boolean): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
    if (clean && this.live.size === 0) removeStartLog(this.path)
  }

  private truncate(): void {
    if (this.fd === undefined) return
    ftruncateSync(this.fd, 0)
    this.bytes = 0
    this.rootsInFile.clear()
  }
}
