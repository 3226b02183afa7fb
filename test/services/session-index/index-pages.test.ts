import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SessionIndexDirectory, SessionIndexEntry } from '../../../contract/session-index'
import { SESSION_INDEX_DIRECTORY_KEY, SESSION_INDEX_PAGE_PREFIX } from '../../../contract/session-index'
import type { IndexState } from '../../../services/session-index/index-pages'
import { INDEX_PAGE_SIZE, listEntries, MAX_PAGES_PER_LIST, readEntry, removeEntry, updateEntry } from '../../../services/session-index/index-pages'

/** The index's state in a map, values copied in and out as Restate's JSON state would. */
function mapState(): IndexState & { values: Map<string, string> } {
  const values = new Map<string, string>()
  return {
    values,
    get: async <T>(key: string) => { const value = values.get(key); return value === undefined ? null : JSON.parse(value) as T },
    set: (key, value) => { values.set(key, JSON.stringify(value)) },
    clear: key => { values.delete(key) },
  }
}

/** Every page of a walk from the head, `limit` at a time, with `between` run before each page after the first. */
async function walk(state: IndexState, limit: number, between: (page: number) => Promise<void> = async () => undefined, status?: string[]): Promise<SessionIndexEntry[]> {
  const seen: SessionIndexEntry[] = []
  let before: number | undefined
  for (let page = 0; page < 10_000; page++) {
    if (page > 0) await between(page)
    const result = await listEntries(state, { limit, ...(before === undefined ? {} : { before }), ...(status ? { status } : {}) })
    seen.push(...result.entries)
    if (result.nextBefore === null) return seen
    before = result.nextBefore
  }
  throw new Error('the walk did not end')
}

const pagesOf = (state: ReturnType<typeof mapState>): [number, number][] => (JSON.parse(state.values.get(SESSION_INDEX_DIRECTORY_KEY) ?? '{"pages":[]}') as SessionIndexDirectory).pages

describe('the session index pages', () => {
  it('lists sessions newest activity first, in pages, each once', async () => {
    const state = mapState()
    for (let index = 0; index < 300; index++) await updateEntry(state, { id: `s${index}`, status: 'completed', lastActivityAt: 1000 + index, turns: 2, costUsd: 0.01, pending: 0 })
    const seen = await walk(state, 7)
    expect(seen.map(entry => entry.id)).toEqual(Array.from({ length: 300 }, (_, index) => `s${299 - index}`))
    expect(pagesOf(state).length).toBe(Math.ceil(300 / INDEX_PAGE_SIZE))
  })

  it('moves an updated session to the head, changes in place without a time, and forgets a removed one', async () => {
    const state = mapState()
    for (const id of ['a', 'b', 'c']) await updateEntry(state, { id, status: 'completed', lastActivityAt: 1 })
    await updateEntry(state, { id: 'a', status: 'running', lastActivityAt: 2 })
    await updateEntry(state, { id: 'b', pending: 2 })
    expect((await walk(state, 10)).map(entry => `${entry.id}:${entry.status}:${entry.pending}`)).toEqual(['a:running:0', 'c:completed:0', 'b:completed:2'])
    expect(await removeEntry(state, 'c')).toMatchObject({ id: 'c' })
    expect(await readEntry(state, 'c')).toBeUndefined()
    expect((await walk(state, 1)).map(entry => entry.id)).toEqual(['a', 'b'])
  })

  it('filters by status, reading a bounded number of pages per call', async () => {
    const state = mapState()
    const count = INDEX_PAGE_SIZE * (MAX_PAGES_PER_LIST + 3)
    for (let index = 0; index < count; index++) await updateEntry(state, { id: `s${index}`, status: index === 5 ? 'failed' : 'completed', lastActivityAt: index })
    const first = await listEntries(state, { limit: 10, status: ['failed'] })
    expect(first.entries).toEqual([])
    expect(first.nextBefore).not.toBeNull()
    expect((await walk(state, 10, undefined, ['failed'])).map(entry => entry.id)).toEqual(['s5'])
  })

  it('keeps pages from thinning out: any two neighbours hold at least a quarter page', async () => {
    const state = mapState()
    for (let index = 0; index < 1000; index++) await updateEntry(state, { id: `s${index}`, status: 'completed', lastActivityAt: index })
    // Touch every other session twice: the old pages empty out by halves while the head grows.
    for (let round = 0; round < 2; round++) for (let index = 0; index < 1000; index += 2) await updateEntry(state, { id: `s${index}`, status: 'completed', lastActivityAt: 2000 + index })
    const pages = pagesOf(state)
    for (let index = 1; index < pages.length; index++) expect((pages[index - 1]?.[1] ?? 0) + (pages[index]?.[1] ?? 0)).toBeGreaterThanOrEqual(INDEX_PAGE_SIZE / 4)
    expect(pages.reduce((sum, [, count]) => sum + count, 0)).toBe(1000)
    expect([...state.values.keys()].filter(key => key.startsWith(SESSION_INDEX_PAGE_PREFIX)).length).toBe(pages.length)
  })

  it('neither misses nor repeats a session while others are created, updated and removed during the walk', async () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('create' as const) }),
      fc.record({ kind: fc.constant('touch' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('patch' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
    )
    await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 40 }), fc.array(fc.array(operation, { maxLength: 12 }), { maxLength: 60 }), async (initial, limit, rounds) => {
      const state = mapState()
      let clock = 0
      let created = 0
      const alive: string[] = []
      const create = async (): Promise<void> => { const id = `s${created++}`; alive.push(id); await updateEntry(state, { id, status: 'completed', lastActivityAt: ++clock }) }
      for (let index = 0; index < initial; index++) await create()
      const atStart = new Set(alive)
      const moved = new Set<string>()
      const seen = await walk(state, limit, async (page) => {
        for (const op of rounds[page - 1] ?? []) {
          if (op.kind === 'create') { await create(); continue }
          const id = alive[op.pick % Math.max(1, alive.length)]
          if (id === undefined) continue
          if (op.kind !== 'patch') moved.add(id)
          // Sends may arrive out of order: a time a little older than the newest listed.
          if (op.kind === 'touch') await updateEntry(state, { id, status: 'running', lastActivityAt: ++clock - (op.pick % 5) })
          else if (op.kind === 'patch') await updateEntry(state, { id, pending: op.pick % 3 })
          else { await removeEntry(state, id); alive.splice(alive.indexOf(id), 1) }
        }
      })
      const ids = seen.map(entry => entry.id)
      // Never a repeat, and the walk goes from newer to older positions.
      expect(new Set(ids).size).toBe(ids.length)
      for (let index = 1; index < seen.length; index++) expect((seen[index]?.seq ?? 0)).toBeLessThan(seen[index - 1]?.seq ?? Infinity)
      for (let index = 1; index < seen.length; index++) expect((seen[index]?.lastActivityAt ?? 0)).toBeLessThanOrEqual(seen[index - 1]?.lastActivityAt ?? Infinity)
      // Every session there at the start that was neither moved (new activity) nor removed is listed, patched or not.
      for (const id of atStart) if (!moved.has(id)) expect(ids).toContain(id)
      // Sessions created or moved during the walk are above its first page: a new walk from the head finds them.
      const again = (await walk(state, limit)).map(entry => entry.id)
      expect(new Set(again)).toEqual(new Set(alive))
    }), { numRuns: 150 })
  })
})
