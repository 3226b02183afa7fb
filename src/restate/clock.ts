import { createHash } from 'node:crypto'

/**
 * RFC-4122-v4-shaped UUID derived from a seed string: a pure function, no RNG. Version and variant bits are set so
 * consumers (and DB uuid columns) treat it as a regular v4 UUID.
 */
export function deterministicUuid(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 16)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/**
 * The journaled clock readings of one invocation, shared by two readers: the runtime's `now()` and the session store's
 * stamps. `now(reader)` journals a read (`read()`, e.g. `ctx.date.now()`), except that a reading the other reader just
 * made is answered once more instead: a run's start right after its session's stamp, or the stamp right after the
 * start, would record two times a few microseconds apart at the cost of a round trip each. A reading is fresh until
 * it is reused or `moved()` says the runtime made a context call that may take time (a step, a wait, a call, a state
 * read; state writes need not say it). A reader never reuses its own reading, so two reads of one reader around waits
 * the runtime cannot see (a tool's own journaling on the bare context) each journal theirs. Which reads reuse is
 * decided by the order of the calls, the same on every replay, and the value reused is the journaled one.
 */
export interface ReadingClock {
  now(reader: ClockReader): Promise<number>
  /** The runtime made a context call that may take time: no reading is fresh any more. */
  moved(): void
}

/** Who reads a {@link ReadingClock}. */
export type ClockReader = 'runtime' | 'store'

/** Builds a {@link ReadingClock} over `read`. */
export function createReadingClock(read: () => Promise<number>): ReadingClock {
  let fresh: { reader: ClockReader; value: Promise<number> } | undefined
  return {
    now(reader) {
      const reusable = fresh !== undefined && fresh.reader !== reader ? fresh.value : undefined
      if (reusable) {
        fresh = undefined
        return reusable
      }
      const value = read()
      fresh = { reader, value }
      return value
    },
    moved() { fresh = undefined },
  }
}

/** Default window of a coalesced clock: one journaled anchor every 8 reads. */
export const DEFAULT_REANCHOR_EVERY = 8

/**
 * A clock that journals one real anchor (`anchor()`, e.g. `ctx.date.now()`) every `reanchorEvery` reads and derives
 * a strictly increasing sequence in between. Values depend only on the journaled anchors and the read count, so
 * they are replay-stable. Within a window they are logical (ordered, near the anchor), not wall-accurate.
 */
export function createCoalescedClock(anchor: () => Promise<number>, reanchorEvery = DEFAULT_REANCHOR_EVERY): { now(): Promise<number> } {
  const every = Math.max(1, Math.floor(reanchorEvery))
  let reads = 0
  let windowBase: Promise<number> | undefined
  return {
    now() {
      const index = reads++
      const offset = index % every
      if (offset === 0 || !windowBase) {
        const previous = windowBase
        const anchored = anchor()
        // A window starts at its anchor, but never at or before the last value of the previous window.
        windowBase = previous ? anchored.then(async value => Math.max(value, (await previous) + every)) : anchored
      }
      return windowBase.then(base => base + offset)
    },
  }
}
