import { execFileSync } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { chmod, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, realpath, rm, symlink, truncate, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import os from 'node:os'
import path from 'node:path'

/**
 * A hostile workspace for the file tools' fuzz: `root` is the workspace, `outside` a folder beside it holding
 * canaries, and everything a tenant can plant is in the root (links out, FIFOs, a socket, a device, huge and sparse
 * files, deep and wide trees, paths near PATH_MAX, odd names). Built once per test file; `remove` deletes it.
 */
export interface HostileFixture {
  /** The folder holding `root`, `outside` and a canary of its own (a real path). */
  readonly base: string
  readonly root: string
  readonly outside: string
  /** Text of every canary outside the workspace: no tool answer may ever hold it. */
  readonly canaryText: string
  /** A name no file has: the fuzz's escaping writes end in it, so what they left outside is easy to find. */
  readonly token: string
  /** Workspace-relative paths the fixture planted (and paths through its links), for the fuzz to draw from. */
  readonly names: readonly string[]
  remove(): Promise<void>
}

const DEEP_LEVELS = 80
const WIDE_ENTRIES = 5000
const LINE_LESS_BYTES = 50 * 1024 * 1024
const SPARSE_BYTES = 10 * 1024 ** 3

/** Names that shells, globs, regexes and path code each find awkward. */
const ODD_NAMES = [
  'new\nline.txt', 'cr\rname', 'tab\tname', '--help', '-rf', '-', ' leading space', 'trailing space ', 'héllo wörld ✓ 🙂.txt',
  '\u202Eevil-rtl.txt', 'x'.repeat(255), 'é'.repeat(127), '..hidden..', 'a..b', '...', '.. ', 'back\\slash', `quote"'name`,
  '%2e%2e', '~', '*?[glob]{a,b}', '$(echo hi)', ':colon:',
]

/** Builds the fixture in a fresh folder of the system's temporary folder. Needs root (mknod) and Linux. */
export async function buildHostileFixture(): Promise<HostileFixture> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'zidane-fuzz-')))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const canaryText = `canary ${randomUUID()}\n`
  await mkdir(root)
  await mkdir(outside)
  await writeFile(path.join(outside, 'canary.txt'), canaryText)
  await writeFile(path.join(base, 'canary.txt'), canaryText)
  const names = [...(await plantTexts(root)), ...(await plantLinks(root, outside)), ...(await plantLargeFiles(root)), ...(await plantTrees(root)), ...(await plantLongPaths(root)), ...(await plantOddNames(root))]
  const { server, names: special } = await plantSpecialFiles(root)
  const remove = async (): Promise<void> => {
    await new Promise(resolve => server.close(resolve))
    // The fuzz may nest folders past PATH_MAX (the worker opens them one by one): `fs.rm` cannot name those, GNU `rm` can.
    await rm(base, { recursive: true, force: true }).catch(() => { execFileSync('rm', ['-rf', '--', base]) })
  }
  return { base, root, outside, canaryText, token: `fuzz-escape-${randomUUID().slice(0, 8)}`, names: [...names, ...special], remove }
}

async function plantTexts(root: string): Promise<string[]> {
  const files: Record<string, string | Buffer> = {
    'notes.txt': `hello world\n${'a'.repeat(40)}b\nold text\n${'x'.repeat(5000)}\ncrlf line\r\n\n  indented\ttab\nlast line without newline`,
    'edit-me.txt': 'old text, old text, old text\n',
    'many-lines.txt': Array.from({ length: 30_000 }, (_, index) => `line ${index} aaaa`).join('\n'),
    'empty.txt': '',
    'binary.bin': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3]),
    'src/app.ts': 'export const answer = 42\n',
    'src/nested/util.ts': 'export function twice(value: number): number { return value * 2 }\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    'node_modules/pkg/index.js': 'module.exports = 1\n',
  }
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true })
    await writeFile(path.join(root, name), content)
  }
  return Object.keys(files)
}

/** Links to the host, to the folder beside the workspace and its canaries, dangling, looping, and links to links. */
async function plantLinks(root: string, outside: string): Promise<string[]> {
  const links: Array<[string, string]> = [
    ['passwd', '/etc/passwd'], ['stdin', '/proc/self/fd/0'], ['proc-root', '/proc/self/root'], ['zero-link', '/dev/zero'],
    ['parent', '..'], ['out', outside], ['out-relative', '../outside'], ['out-canary', path.join(outside, 'canary.txt')],
    ['dangling', 'missing/nowhere.txt'], ['dangling-out', path.join(outside, 'created-by-a-write.txt')], ['dangling-out-folder', path.join(outside, 'new-folder')],
    ['loop-a', 'loop-b'], ['loop-b', 'loop-a'], ['self-loop', 'self-loop'], ['hop', 'out-canary'], ['hop-folder', 'out'],
    ['inside-link', 'notes.txt'], ['src-link', 'src'], ['through-subfolder', 'src/nested/../../../outside'], ['src/up', '../..'],
  ]
  for (const [name, target] of links) await symlink(target, path.join(root, name))
  const through = ['out/canary.txt', 'out-relative/canary.txt', 'parent/canary.txt', 'parent/outside/canary.txt', 'parent/root/notes.txt', 'hop-folder/canary.txt', 'src/up/outside/canary.txt', 'through-subfolder/canary.txt', `proc-root${outside}/canary.txt`, 'proc-root/etc/passwd', 'proc-root/etc', 'src-link/app.ts', 'dangling-out-folder/file.txt', 'loop-a/x', 'stdin/x']
  return [...links.map(([name]) => name), ...through]
}

/** A FIFO, a listening unix socket and a character device (/dev/zero's numbers); the server must be closed at the end. */
async function plantSpecialFiles(root: string): Promise<{ server: Server; names: string[] }> {
  execFileSync('mkfifo', [path.join(root, 'fifo')])
  execFileSync('mknod', [path.join(root, 'zero'), 'c', '1', '5'])
  const server = createServer()
  await new Promise<void>(resolve => server.listen(path.join(root, 'sock'), resolve))
  return { server, names: ['fifo', 'zero', 'sock'] }
}

/** A sparse 10 GB file, a 50 MB file without a newline, and a file with no permissions (root still reads it). */
async function plantLargeFiles(root: string): Promise<string[]> {
  await writeFile(path.join(root, 'sparse-10g'), '')
  await truncate(path.join(root, 'sparse-10g'), SPARSE_BYTES)
  const file = await open(path.join(root, 'line-less-50mb'), 'w')
  const block = Buffer.alloc(8 * 1024 * 1024, 'a')
  for (let written = 0; written < LINE_LESS_BYTES; written += block.length) await file.write(block)
  await file.close()
  await writeFile(path.join(root, 'unreadable.txt'), 'secret of the workspace\n')
  await chmod(path.join(root, 'unreadable.txt'), 0o000)
  return ['sparse-10g', 'line-less-50mb', 'unreadable.txt']
}

/** A tree 80 folders deep (past the walks' depth bound) and a folder of 5,000 entries. */
async function plantTrees(root: string): Promise<string[]> {
  const deep = path.join(root, 'deep', ...Array.from({ length: DEEP_LEVELS }, () => 'd'))
  await mkdir(deep, { recursive: true })
  await writeFile(path.join(deep, 'bottom.txt'), 'bottom\n')
  await mkdir(path.join(root, 'wide'))
  for (let start = 0; start < WIDE_ENTRIES; start += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, offset) => writeFile(path.join(root, 'wide', `f${String(start + offset).padStart(4, '0')}`), '')))
  }
  const deepPath = (levels: number): string => ['deep', ...Array.from({ length: levels }, () => 'd')].join('/')
  return ['deep', deepPath(10), deepPath(63), deepPath(64), `${deepPath(DEEP_LEVELS)}/bottom.txt`, 'wide', 'wide/f0042', 'wide/f4999']
}

/**
 * 1,000 files at the bottom of 15 folders named with 250 control characters each: paths near PATH_MAX whose every
 * character JSON escapes as six, so any answer listing them all is tens of megabytes.
 */
async function plantLongPaths(root: string): Promise<string[]> {
  const folder = path.join(root, 'long', ...Array.from({ length: 15 }, () => '\x01'.repeat(250)))
  await mkdir(folder, { recursive: true })
  await Promise.all(Array.from({ length: 1000 }, (_, index) => writeFile(path.join(folder, `f${String(index).padStart(3, '0')}`), '')))
  return ['long', path.relative(root, folder).split(path.sep).join('/')]
}

/** Files with odd names, a folder with `..` in its name, and a name that is not valid UTF-8 (planted as bytes). */
async function plantOddNames(root: string): Promise<string[]> {
  for (const name of ODD_NAMES) await writeFile(path.join(root, name), 'odd\n')
  await mkdir(path.join(root, '..dir..'))
  await writeFile(path.join(root, '..dir..', 'inner.txt'), 'inner\n')
  await writeFile(Buffer.concat([Buffer.from(`${root}/bad-`), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('.txt')]), 'not utf-8\n')
  return [...ODD_NAMES, '..dir..', '..dir../inner.txt', 'bad-\uFFFD\uFFFD\uFFFD.txt']
}

/**
 * A fingerprint of everything in the fixture's base folder but the workspace: each entry's path, kind, link target
 * and content hash. Equal fingerprints before and after: nothing outside the workspace was created or changed.
 */
export async function outsideFingerprint(fixture: HostileFixture): Promise<string> {
  const lines: string[] = []
  const visit = async (folder: string): Promise<void> => {
    for (const name of (await readdir(folder)).sort()) {
      const entry = path.join(folder, name)
      if (entry === fixture.root) continue
      const stats = await lstat(entry)
      if (stats.isDirectory()) await visit(entry)
      const detail = stats.isSymbolicLink() ? await readlink(entry) : stats.isFile() ? createHash('sha256').update(await readFile(entry)).digest('hex') : ''
      lines.push(`${path.relative(fixture.base, entry)} ${stats.mode.toString(8)} ${stats.size} ${detail}`)
    }
  }
  await visit(fixture.base)
  return lines.join('\n')
}

/** Entries named with the fixture's token in the host's root folder and temporary folder: what an escaping write left. */
export async function escapeLeftovers(fixture: HostileFixture): Promise<string[]> {
  const folders = [...new Set(['/', '/tmp', os.tmpdir(), path.dirname(fixture.base)])]
  const found = await Promise.all(folders.map(async folder => (await readdir(folder)).filter(name => name.includes(fixture.token)).map(name => path.join(folder, name))))
  return found.flat()
}
