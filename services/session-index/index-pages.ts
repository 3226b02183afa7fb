import type { SessionIndexDirectory, SessionIndexEntry, SessionIndexListRequest, SessionIndexPage, SessionIndexUpdate } from '../../contract/session-index'
import { SESSION_INDEX_DIRECTORY_KEY, SESSION_INDEX_PAGE_PREFIX, SESSION_INDEX_POSITION_PREFIX } from '../../contract/session-index'

/**
 * Most entries one page holds. A page is one state value (about 8 KiB of JSON at 64 entries): an update reads and
 * writes at most three pages and the directory, whatever the tenant's number of sessions. Durable: pages hold it.
 */
export const INDEX_PAGE_SIZE = 64
/** Below this many entries a page is merged into a neighbour that has room: any two neighbours hold a quarter page. */
const SPARSE_PAGE = INDEX_PAGE_SIZE / 4
/** Most pages one `list` reads; a filter that matches little returns what those held and a cursor to go on. */
export const MAX_PAGES_PER_LIST = 32

/** The few state operations the index needs: the object's context in the handlers, a map in the unit tests. */
export interface IndexState {
  get<T>(key: string): Promise<T | null>
  set<T>(key: string, value: T): void
  clear(key: string): void
}

const pageKey = (first: number): string => `${SESSION_INDEX_PAGE_PREFIX}${first}`
const positionKey = (id: string): string => `${SESSION_INDEX_POSITION_PREFIX}${id}`

/** The index of the page holding position `seq` (the last page whose first position is at most `seq`), or -1. */
function pageOf(directory: SessionIndexDirectory, seq: number): number {
  let found = -1
  for (let index = 0; index < directory.pages.length && (directory.pages[index]?.[0] ?? Infinity) <= seq; index++) found = index
  return found
}

/**
 * One change of the index: pages read once and written in an order that keeps every entry findable by a concurrent
 * reader (the new copy, then the directory, then the removal of the old copy), since Restate applies state writes as
 * they come and a shared `list` may read between them.
 */
class Change {
  private readonly loaded = new Map<number, SessionIndexEntry[]>()
  private readonly added = new Set<number>()
  private readonly shrunk = new Set<number>()

  constructor(private readonly state: IndexState, readonly directory: SessionIndexDirectory) {}

  async page(first: number): Promise<SessionIndexEntry[]> {
    const cached = this.loaded.get(first)
    if (cached) return cached
    const entries = (await this.state.get<SessionIndexEntry[]>(pageKey(first))) ?? []
    this.loaded.set(first, entries)
    return entries
  }

  /** The entry at `seq`, left where it is; undefined when it is not there. */
  async find(seq: number): Promise<SessionIndexEntry | undefined> {
    const slot = this.directory.pages[pageOf(this.directory, seq)]
    return slot ? (await this.page(slot[0])).find(entry => entry.seq === seq) : undefined
  }

  /** Takes the entry at `seq` out of its page; undefined when it is not there. */
  async take(seq: number): Promise<SessionIndexEntry | undefined> {
    const index = pageOf(this.directory, seq)
    const slot = this.directory.pages[index]
    if (!slot) return undefined
    const entries = await this.page(slot[0])
    const at = entries.findIndex(entry => entry.seq === seq)
    if (at < 0) return undefined
    const [entry] = entries.splice(at, 1)
    slot[1] = entries.length
    this.shrunk.add(slot[0])
    return entry
  }

  /** Appends `entry` (its `seq` the newest) to the head page, or to a new one when the head is full. */
  async append(entry: SessionIndexEntry): Promise<void> {
    const head = this.directory.pages.at(-1)
    if (!head || head[1] >= INDEX_PAGE_SIZE) {
      this.directory.pages.push([entry.seq, 1])
      this.loaded.set(entry.seq, [entry])
      this.added.add(entry.seq)
      return
    }
    const entries = await this.page(head[0])
    entries.push(entry)
    head[1] = entries.length
    this.added.add(head[0])
  }

  /** Replaces the entry at `entry.seq` where it is. */
  async replace(entry: SessionIndexEntry): Promise<boolean> {
    const slot = this.directory.pages[pageOf(this.directory, entry.seq)]
    if (!slot) return false
    const entries = await this.page(slot[0])
    const at = entries.findIndex(existing => existing.seq === entry.seq)
    if (at < 0) return false
    entries[at] = entry
    this.added.add(slot[0])
    return true
  }

  /** Merges shrunk pages into a neighbour with room, so the pages stay at least a quarter full on average. */
  async rebalance(): Promise<Set<number>> {
    const cleared = new Set<number>()
    for (const first of this.shrunk) {
      const index = this.directory.pages.findIndex(([start]) => start === first)
      const slot = this.directory.pages[index]
      if (!slot || slot[1] >= SPARSE_PAGE || index === this.directory.pages.length - 1) continue
      const older = this.directory.pages[index - 1]
      const newer = this.directory.pages[index + 1]
      if (slot[1] === 0 || (older && older[1] + slot[1] <= INDEX_PAGE_SIZE)) {
        // Into the older neighbour: it takes over this page's positions (no neighbour and empty: nothing to keep).
        if (older) await this.absorb(older, first)
        this.directory.pages.splice(index, 1)
        cleared.add(first)
      } else if (newer && newer[1] + slot[1] <= INDEX_PAGE_SIZE) {
        await this.absorb(slot, newer[0])
        this.directory.pages.splice(index + 1, 1)
        cleared.add(newer[0])
      }
    }
    return cleared
  }

  /** Appends the entries of the page at `first` (the next one up) to the page of `target`. */
  private async absorb(target: [number, number], first: number): Promise<void> {
    const entries = await this.page(target[0])
    entries.push(...(await this.page(first)))
    target[1] = entries.length
    this.added.add(target[0])
  }

  /** Writes: the pages that gained entries, the directory, then the pages that lost some, then the cleared ones. */
  commit(cleared: Set<number>): void {
    for (const first of this.added) if (!cleared.has(first)) this.state.set(pageKey(first), this.loaded.get(first) ?? [])
    this.state.set(SESSION_INDEX_DIRECTORY_KEY, this.directory)
    for (const first of this.shrunk) if (!cleared.has(first) && !this.added.has(first)) this.state.set(pageKey(first), this.loaded.get(first) ?? [])
    for (const first of cleared) this.state.clear(pageKey(first))
  }
}

async function openChange(state: IndexState): Promise<Change> {
  const directory = (await state.get<SessionIndexDirectory>(SESSION_INDEX_DIRECTORY_KEY)) ?? { next: 1, pages: [] }
  return new Change(state, directory)
}

/**
 * Applies `update` to session `update.id`'s entry (created when missing): with `lastActivityAt` it moves to the head
 * with a new position (and a time at least the newest listed, so order and times agree), without it changes in place.
 * Returns the entry as it now is.
 */
export async function updateEntry(state: IndexState, update: SessionIndexUpdate): Promise<SessionIndexEntry> {
  const change = await openChange(state)
  const position = await state.get<number>(positionKey(update.id))
  const moves = update.lastActivityAt !== undefined || position === null
  const old = position === null ? undefined : moves ? await change.take(position) : await change.find(position)
  const at = update.lastActivityAt ?? old?.lastActivityAt ?? 0
  const base: SessionIndexEntry = old ?? { id: update.id, seq: 0, status: 'idle', lastActivityAt: at, createdAt: at, turns: 0, costUsd: 0, pending: 0 }
  const fields = Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined)) as SessionIndexUpdate
  const entry: SessionIndexEntry = { ...base, ...fields, seq: base.seq }
  if (moves) {
    entry.lastActivityAt = Math.max(at, change.directory.latest ?? 0)
    change.directory.latest = entry.lastActivityAt
    entry.seq = change.directory.next++
    await change.append(entry)
    state.set(positionKey(update.id), entry.seq)
  } else {
    await change.replace(entry)
  }
  change.commit(await change.rebalance())
  return entry
}

/** Drops session `id`'s entry; returns it, or undefined when the index had none. */
export async function removeEntry(state: IndexState, id: string): Promise<SessionIndexEntry | undefined> {
  const position = await state.get<number>(positionKey(id))
  if (position === null) return undefined
  const change = await openChange(state)
  const entry = await change.take(position)
  change.commit(await change.rebalance())
  state.clear(positionKey(id))
  return entry
}

/** Session `id`'s entry, or undefined. */
export async function readEntry(state: Pick<IndexState, 'get'>, id: string): Promise<SessionIndexEntry | undefined> {
  const position = await state.get<number>(positionKey(id))
  const directory = await state.get<SessionIndexDirectory>(SESSION_INDEX_DIRECTORY_KEY)
  if (position === null || directory === null) return undefined
  const slot = directory.pages[pageOf(directory, position)]
  const entries = slot ? (await state.get<SessionIndexEntry[]>(pageKey(slot[0]))) ?? [] : []
  return entries.find(entry => entry.seq === position)
}

/**
 * One page of the listing: entries with `seq < before`, newest first. Reads the directory and then pages from the
 * newest down, at most {@link MAX_PAGES_PER_LIST}. An entry read twice (a concurrent move between two reads) counts
 * once, at its newer position.
 */
export async function listEntries(state: Pick<IndexState, 'get'>, request: SessionIndexListRequest): Promise<SessionIndexPage> {
  const directory = (await state.get<SessionIndexDirectory>(SESSION_INDEX_DIRECTORY_KEY)) ?? { next: 1, pages: [] }
  const before = request.before ?? Infinity
  const statuses = request.status && request.status.length > 0 ? new Set(request.status) : undefined
  const found = new Map<string, SessionIndexEntry>()
  let reads = 0
  for (let index = directory.pages.length - 1; index >= 0; index--) {
    const first = directory.pages[index]?.[0] ?? 0
    if (first >= before) continue
    // Every page above this one was read: the next request starts at the lowest of them.
    if (reads === MAX_PAGES_PER_LIST) return cut(found, request.limit, directory.pages[index + 1]?.[0] ?? null)
    reads += 1
    for (const entry of (await state.get<SessionIndexEntry[]>(pageKey(first))) ?? []) {
      if (entry.seq >= before || (statuses && !statuses.has(entry.status))) continue
      const seen = found.get(entry.id)
      if (!seen || seen.seq < entry.seq) found.set(entry.id, entry)
    }
    if (found.size >= request.limit) return cut(found, request.limit, first)
  }
  return cut(found, request.limit, null)
}

/** The newest `limit` of `found`; the cursor is the last one's position when some were cut, else `scanned`. */
function cut(found: Map<string, SessionIndexEntry>, limit: number, scanned: number | null): SessionIndexPage {
  const sorted = [...found.values()].sort((left, right) => right.seq - left.seq)
  const entries = sorted.slice(0, limit)
  if (sorted.length > limit) return { entries, nextBefore: entries.at(-1)?.seq ?? null }
  return { entries, nextBefore: scanned }
}
