import { spawn } from 'node:child_process'
import { constants, existsSync, readdirSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFileWorker } from '../../../../src/tools/builtin/file-worker-client'
import type { FileOperation, FileWorker } from '../../../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../../../src/tools/builtin/file-worker-pool'
import { openFolderBeneath } from '../../../../src/tools/builtin/file-worker/beneath'
import { openForWrite, openRegular } from '../../../../src/tools/builtin/file-worker/open-regular'
import { resolveInside } from '../../../../src/tools/builtin/file-worker/resolve-path'
import { walkBudget, walkFiles } from '../../../../src/tools/builtin/file-worker/walk-files'
import type { FileWorkerPool } from '../../../../src/tools/builtin/file-worker-pool'
import { sandboxModes, useSandbox } from '../tool-context'
import { outcome, SECRET, twoSessionTenant } from './two-session-tenant'

/**
 * Attacks on a file worker shared by the sessions of one tenant (bound to `<root>/<tenant>`, as the services bind
 * it): session `s1` controls everything in its workspace, and must never read, write, list or learn anything of its
 * sibling `s2` or of the tenant's folder, nor wear the shared worker down.
 */

/** Symbolic links the kernel follows in one resolution before it answers ELOOP. */
const KERNEL_MAX_HOPS = 40

/** Every file and folder below `folder` with its content, to compare before and after an attack. */
async function snapshot(folder: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {}
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name)
    entries[path.relative(folder, full)] = entry.isFile() ? await readFile(full, 'utf8') : entry.isDirectory() ? '<dir>' : '<other>'
  }
  return entries
}

/** Renames `a` and `b` among a real folder and a link, as fast as it can, in `folder` (what the session's shell can do). */
function flipper(folder: string, pairs: ReadonlyArray<readonly [string, string]>): ReturnType<typeof spawn> {
  const program = `const fs=require('fs');process.chdir(process.argv[1]);const p=JSON.parse(process.argv[2]);for(;;){for(const [a,b] of p){try{fs.renameSync(a,b)}catch{}}}`
  return spawn(process.execPath, ['-e', program, folder, JSON.stringify(pairs)], { stdio: 'ignore' })
}

const modes = sandboxModes()

describe.each(modes)('a file worker shared by a tenant\'s sessions, %s', (_mode, sandbox) => {
  const folders = useSandbox()
  let tenant: string
  let s1: string
  let s2: string
  let pool: FileWorkerPool
  let groups: Array<number | undefined>
  let worker: FileWorker

  beforeEach(async () => {
    ;({ tenant, s1, s2 } = await twoSessionTenant(folders.root))
    await mkdir(path.join(s2, 'private-dir'))
    await writeFile(path.join(tenant, 'tenant.txt'), `${SECRET}\n`)
    await writeFile(path.join(s1, 'f.txt'), 'mine\n')
    groups = []
    pool = createFileWorkerPool({ onWorkerStart: group => groups.push(group) })
    worker = createFileWorker(s1, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 5_000, ...(sandbox ? { sandbox } : {}) })
  })

  afterEach(() => pool.close())

  it('answers a link through a sibling\'s folder the same whether that folder exists or not (no existence oracle)', async () => {
    // A chain of 40 links to f.txt, what the kernel follows at most: one more link in front is one too many.
    await symlink('f.txt', path.join(s1, `c${KERNEL_MAX_HOPS}`))
    for (let index = KERNEL_MAX_HOPS - 1; index >= 1; index -= 1) await symlink(`c${index + 1}`, path.join(s1, `c${index}`))
    // Through `../s2/<name>/..` back into s1: were the kernel to walk s2, the hops would differ with <name>'s existence.
    await symlink('../s2/private-dir/../../s1/c1', path.join(s1, 'probe-present'))
    await symlink('../s2/no-such-dir/../../s1/c1', path.join(s1, 'probe-absent'))
    await symlink('../s3/../s1/c1', path.join(s1, 'probe-session'))
    const answers = await Promise.all(['probe-present', 'probe-absent', 'probe-session'].map(probe => outcome(worker, { op: 'read', path: probe, offset: 1, limit: 5 })))
    expect(answers).toEqual(['error:path_outside_workspace', 'error:path_outside_workspace', 'error:path_outside_workspace'])
  }, 15_000)

  it('refuses /proc/self paths and links to them, which would name the worker\'s own folders', async () => {
    await symlink('/proc/self/cwd/s2/secret.txt', path.join(s1, 'via-cwd'))
    await symlink('/proc/self/root/proc/self/cwd/tenant.txt', path.join(s1, 'via-root'))
    const probes: FileOperation[] = [
      { op: 'read', path: '/proc/self/fd/3/../s2/secret.txt', offset: 1, limit: 5 },
      { op: 'read', path: '/proc/self/cwd/s2/secret.txt', offset: 1, limit: 5 },
      { op: 'read', path: 'via-cwd', offset: 1, limit: 5 },
      { op: 'read', path: 'via-root', offset: 1, limit: 5 },
      { op: 'list', path: '/proc/self/cwd' },
      { op: 'list', path: '..' },
      { op: 'grep', path: '..', pattern: SECRET },
      { op: 'glob', path: '../s2', pattern: '*' },
      { op: 'write', path: '../s2/new.txt', content: 'x' },
      { op: 'write', path: 'via-cwd', content: 'x' },
    ]
    for (const probe of probes) expect(await outcome(worker, probe)).toMatch(/^error:path_outside_workspace$/)
    expect(await readFile(path.join(s2, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`)
    expect(existsSync(path.join(s2, 'new.txt'))).toBe(false)
  }, 15_000)

  it('follows links inside the session, absolute ones too, and refuses those that leave it however they are spelled', async () => {
    await mkdir(path.join(s1, 'd', 'e'), { recursive: true })
    await writeFile(path.join(s1, 'd', 'e', 'g.txt'), 'deep\n')
    await symlink(path.join(s1, 'f.txt'), path.join(s1, 'absolute-in'))
    await symlink('d/e/../../f.txt', path.join(s1, 'relative-in'))
    await symlink('e', path.join(s1, 'd', 'to-e'))
    await symlink(`${s1}/../s2/secret.txt`, path.join(s1, 'absolute-out'))
    await symlink(`${s1}-other/x`, path.join(s1, 'prefix-out'))
    await symlink('d/../../s2/secret.txt', path.join(s1, 'relative-out'))
    await symlink('loop', path.join(s1, 'loop'))
    const read = (file: string): Promise<string> => outcome(worker, { op: 'read', path: file, offset: 1, limit: 5 })
    expect(await read('absolute-in')).toBe('1\tmine')
    expect(await read('relative-in')).toBe('1\tmine')
    expect(await read('d/to-e/g.txt')).toBe('1\tdeep')
    expect(await read('d/to-e/../e/g.txt')).toBe('1\tdeep')
    for (const link of ['absolute-out', 'prefix-out', 'relative-out']) expect(await read(link)).toBe('error:path_outside_workspace')
    expect(await outcome(worker, { op: 'write', path: 'relative-out', content: 'x' })).toBe('error:path_outside_workspace')
    expect(await read('loop')).toBe('error:path_symlink_loop')
    expect(await readFile(path.join(s2, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`)
  }, 15_000)

  it('reads, writes, lists and finds files of odd names (a newline, 255 bytes, dots) inside the session only', async () => {
    const names = ['new\nline.txt', 'x'.repeat(255), '...', '..hidden', '-rf', ' spaced ']
    for (const name of names) expect(await outcome(worker, { op: 'write', path: `odd/${name}`, content: `${name.length}\n` })).toMatch(/^Wrote /)
    for (const name of names) expect(await outcome(worker, { op: 'read', path: `odd/${name}`, offset: 1, limit: 5 })).toBe(`1\t${name.length}`)
    expect((await readdir(path.join(s1, 'odd'))).sort()).toEqual([...names].sort())
    expect(await outcome(worker, { op: 'glob', path: 'odd', pattern: '*' })).toContain(`odd/${'x'.repeat(255)}`)
    expect(await outcome(worker, { op: 'write', path: `odd/${'y'.repeat(256)}`, content: 'x' })).toMatch(/^error:/)
    expect((await readdir(tenant)).sort()).toEqual(['s1', 's2', 'tenant.txt'])
  }, 15_000)

  it('keeps its descriptors across hundreds of failing calls (no folder left open on an error path)', async () => {
    await mkdir(path.join(s1, 'a', 'b'), { recursive: true })
    await symlink('../s2', path.join(s1, 'a', 'link'))
    await writeFile(path.join(s1, 'a', 'file'), 'x')
    expect(await outcome(worker, { op: 'list', path: '.' })).toContain('f.txt')
    const group = groups[0]
    if (sandbox !== undefined || group === undefined) return // inside bwrap the worker is a grandchild in another pid namespace
    const before = readdirSync(`/proc/${group}/fd`).length
    const failing: FileOperation[] = [
      { op: 'read', path: 'a/link/secret.txt', offset: 1, limit: 5 },
      { op: 'read', path: 'a/file/x', offset: 1, limit: 5 },
      { op: 'read', path: 'a/b/missing', offset: 1, limit: 5 },
      { op: 'read', path: 'a/b', offset: 1, limit: 5 },
      { op: 'write', path: 'a/file/deeper/x.txt', content: 'x' },
      { op: 'write', path: 'a/b', content: 'x' },
      { op: 'edit', path: 'a/b/missing', oldText: 'a', newText: 'b', replaceAll: false },
      { op: 'edit', path: 'f.txt', oldText: 'absent', newText: 'b', replaceAll: false },
      { op: 'list', path: 'a/file' },
      { op: 'list', path: 'a/link' },
      { op: 'glob', path: 'a/file', pattern: '*' },
      { op: 'grep', path: 'a/b/missing', pattern: 'x' },
      { op: 'grep', path: '.', pattern: '(' },
    ]
    for (let round = 0; round < 30; round += 1) for (const operation of failing) expect(await outcome(worker, operation)).toMatch(/^error:/)
    // A path 1500 folders deep holds as many folders open while it is resolved, and gives them all back.
    const deep = Array.from({ length: 1500 }, () => 'd').join('/')
    await mkdir(path.join(s1, deep), { recursive: true })
    await writeFile(path.join(s1, deep, 'end.txt'), 'bottom\n')
    expect(await outcome(worker, { op: 'read', path: `${deep}/end.txt`, offset: 1, limit: 5 })).toBe('1\tbottom')
    expect(await outcome(worker, { op: 'read', path: `${deep}/missing/x.txt`, offset: 1, limit: 5 })).toMatch(/^error:/)
    expect(readdirSync(`/proc/${group}/fd`).length).toBe(before)
    expect(groups).toHaveLength(1) // the same worker answered them all
  }, 15_000)

  it('never writes, edits, persists or creates folders in a sibling session while its folders are swapped for links', async () => {
    await mkdir(path.join(s1, 'd', 'sub'), { recursive: true })
    await mkdir(path.join(s1, 'tool-results'))
    await writeFile(path.join(s1, 'd', 'sub', 'e.txt'), 'edit me\n')
    await writeFile(path.join(s2, 'e.txt'), 'edit me\n')
    await mkdir(path.join(s2, 'sub'))
    await writeFile(path.join(s2, 'sub', 'e.txt'), 'edit me\n')
    await symlink('../s2', path.join(s1, 'sym'))
    await symlink('../s2', path.join(s1, 'tr-sym'))
    const s2Before = await snapshot(s2)
    const tenantBefore = (await readdir(tenant)).sort()
    const operations: FileOperation[] = [
      { op: 'write', path: 'd/new/deep/w.txt', content: 'from s1' },
      { op: 'write', path: 'd/sub/w.txt', content: 'from s1' },
      { op: 'edit', path: 'd/sub/e.txt', oldText: 'edit me', newText: 'edited by s1', replaceAll: false },
      { op: 'persist', folder: 'tool-results', name: 'call.txt', content: 'persisted by s1' },
      { op: 'read', path: 'd/secret.txt', offset: 1, limit: 5 },
      { op: 'grep', path: '.', pattern: SECRET },
      { op: 'glob', path: 'd', pattern: '**' },
      { op: 'list', path: 'd' },
    ]
    const flip = flipper(s1, [['d', 'real'], ['sym', 'd'], ['d', 'sym'], ['real', 'd'], ['tool-results', 'tr-real'], ['tr-sym', 'tool-results'], ['tool-results', 'tr-sym'], ['tr-real', 'tool-results']])
    const leaks: string[] = []
    let calls = 0
    const deadline = Date.now() + 3_000
    try {
      while (Date.now() < deadline) {
        const operation = operations[calls % operations.length] as FileOperation
        calls += 1
        const text = await outcome(worker, operation)
        if (text.includes(SECRET) || text.includes('private-dir')) leaks.push(`${operation.op}: ${text}`)
      }
    } finally {
      flip.kill('SIGKILL')
    }
    expect(leaks).toEqual([])
    expect(await snapshot(s2)).toEqual(s2Before)
    expect((await readdir(tenant)).sort()).toEqual(tenantBefore)
    expect(calls).toBeGreaterThan(50) // the race ran
  }, 20_000)
})

describe('a worker\'s opens after its session swaps a resolved folder for a link to a sibling session', () => {
  const folders = useSandbox()
  let tenant: string
  let s1: string
  let s2: string

  beforeEach(async () => {
    tenant = path.join(folders.root, 'acme')
    s1 = path.join(tenant, 's1')
    s2 = path.join(tenant, 's2')
    await mkdir(path.join(s1, 'd', 'e'), { recursive: true })
    await mkdir(path.join(s2, 'e'), { recursive: true })
    await writeFile(path.join(s1, 'd', 'e', 'f.txt'), 'mine\n')
    await writeFile(path.join(s2, 'e', 'f.txt'), `${SECRET}\n`)
    await writeFile(path.join(s2, 'f.txt'), `${SECRET}\n`)
  })

  /** Puts a link to `s2` where the folder `relative` of s1 was (the folder moved aside), as the session's shell can between two calls. */
  const swap = async (relative: string): Promise<void> => {
    await rename(path.join(s1, relative), path.join(s1, 'aside'))
    await symlink(path.relative(path.dirname(path.join(s1, relative)), s2), path.join(s1, relative))
  }

  it('fails a read, an edit and a listing instead of following the link', async () => {
    const file = await resolveInside(s1, 'd/e/f.txt')
    const folder = await resolveInside(s1, 'd/e')
    await swap('d')
    await expect(openRegular(file, constants.O_RDONLY)).rejects.toMatchObject({ code: 'not_a_directory' })
    await expect(openRegular(file, constants.O_RDWR)).rejects.toMatchObject({ code: 'not_a_directory' })
    await expect(openFolderBeneath(folder.root, folder.relative)).rejects.toMatchObject({ code: 'ENOTDIR' })
    expect(await readFile(path.join(s2, 'e', 'f.txt'), 'utf8')).toBe(`${SECRET}\n`)
  })

  it('creates no file nor folder in the sibling when a write\'s folder, or one it creates below, is swapped', async () => {
    const deep = await resolveInside(s1, 'd/e/new/w.txt')
    const shallow = await resolveInside(s1, 'd/e/w.txt')
    const before = await snapshot(s2)
    await swap('d/e')
    await expect(openForWrite(deep, true)).rejects.toMatchObject({ code: 'not_a_directory' })
    await expect(openForWrite(shallow, true)).rejects.toMatchObject({ code: 'not_a_directory' })
    expect(await snapshot(s2)).toEqual(before)
  })

  it('never descends into a folder swapped for a link while a walk is under way', async () => {
    await writeFile(path.join(s1, 'a.txt'), 'first\n')
    const root = await openFolderBeneath(s1, '.')
    const seen: string[] = []
    try {
      for await (const file of walkFiles(root, walkBudget())) {
        seen.push(file.relative)
        // The walk has listed s1 and holds it: `d` goes before the walk descends into it.
        if (file.relative === 'a.txt') await swap('d')
      }
    } finally {
      await root.close()
    }
    expect(seen).toEqual(['a.txt'])
  })
})
