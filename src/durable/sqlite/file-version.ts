/**
 * Facts read from the file that stay true until another connection commits: the runtime keeps them between turns
 * instead of querying again. `PRAGMA data_version` changes exactly when a commit of another connection (another
 * process, or another runtime of this one) reached the file since this connection last read it; this
 * connection's own commits do not change it, and the runtime's own writes never make a kept fact false (it never
 * hands a run to another owner, and it forgets steering facts when it writes steering itself).
 */
export class FileVersion {
  private version: number | undefined
  private readonly facts = new Set<string>()

  /** `readVersion` runs `PRAGMA data_version` on the runtime's connection. */
  constructor(private readonly readVersion: () => number) {}

  /**
   * Reads the file's version now (one pragma, cheaper than the query it saves) and forgets every kept fact when
   * another connection committed since the last read. Inside a write transaction the read sees the file as the
   * transaction does.
   */
  refresh(): void {
    const version = this.readVersion()
    if (version === this.version) return
    this.version = version
    this.facts.clear()
  }

  /** Forgets every kept fact (a transaction rolled back: what it kept may describe writes that never happened). */
  forgetAll(): void {
    this.facts.clear()
  }

  /** Whether `fact` was kept since the last change by another connection (as of the last `refresh`). */
  holds(fact: string): boolean {
    return this.facts.has(fact)
  }

  /** Keeps `fact`, read from the file after the last `refresh`. */
  keep(fact: string): void {
    this.facts.add(fact)
  }

  /** Forgets `fact` (this connection is about to write what it was about). */
  forget(fact: string): void {
    this.facts.delete(fact)
  }
}
