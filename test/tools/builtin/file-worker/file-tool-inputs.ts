import fc from 'fast-check'
import type { Arbitrary } from 'fast-check'
import type { JsonObject } from '../../../../src/json'
import type { HostileFixture } from './hostile-fixture'

/** One drawn call: which file tool, with what input (as a model could send it, or worse). */
export interface FileToolCall {
  tool: 'read_file' | 'write_file' | 'edit_file' | 'grep' | 'glob' | 'list_files'
  input: JsonObject
}

/**
 * Host text no answer may hold: absolute host paths (at a path boundary, so a workspace path `a/dev/b` is no
 * match), descriptor names of pipes and sockets, /etc/passwd's first line.
 */
export const HOST_MARKERS = /(?<![\w.~-])\/(?:etc|proc|dev)\/|pipe:\[|socket:\[|root:x:0:0/

const CATASTROPHIC_PATTERNS = ['(a+)+$', '^(a+)+$', '(.*a){20}', '(a|a)*b', '(a|aa)+$', '(x+x+)+y', '^(\\w+\\s?)*$', '(.*){1,32000}[bc]', '(a*)*b', '^(([a-z])+.)+[A-Z]([a-z])+$']
const BACKREFERENCE_PATTERNS = ['(a)\\1', '(.)\\1{3}', '(?<n>a+)\\k<n>', '^(a+)\\1*$', '(.+)\\1+$', '^(a+)+\\1$', '((a+)+)\\2b']
const ODD_PATTERNS = ['', '.', '.*', '^', '$', '\\n', '\\0', '[\\s\\S]', '(?<=a+)b', '(?<!a)b', 'a{0,65535}', 'a{99999999}', '\\p{L}', '[', '(', ')', '*', 'a**', '(?<a>', '\\', '\\k<x>', '[z-a]', 'a{2,1}', '(?i)a', '/etc/passwd', 'root:x', 'canary', 'pipe:\\[', 'socket:\\[']
const GLOBS = ['**', '**/*', '*', '**/*.txt', '*.ts', 'src/**/*.ts', '{a,b}', '{', '}', '{{{{', '{a,{b,{c,{d}}}}', '**/**/**/**/**/**/**/bottom.txt', '*a*a*a*a*a*a*a*a*a*a*a*a*b', '**/x*x*x*x*x*x*x*x*x*y', '\\', '\\*', '[', '[a-z]', '../*', '../**', '/etc/*', '**/passwd', '**/canary*', 'wide/f4*', 'deep/**', '?', '???????', '.*', '*\n*', '{,}', '{,,,,,,,,}']
const OFFSETS = [0, -1, 1, 2, 2000, 2001, 30_000, 1e9, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 1.5, -0, Number.MAX_VALUE, Infinity, Number.NaN]

/** Characters a random path is made of: separators, dots, escapes, NUL and a few letters. */
const PATH_CHARS = fc.constantFrom('a', 'b', '.', '.', '/', '/', '\0', '%', '~', '\n', '-', '\\', 'é', ' ', '*')
const REGEX_CHARS = fc.constantFrom(...'()[]{}*+?|.^$\\a1,:<>=!-dwsbk'.split(''))
const GLOB_CHARS = fc.constantFrom(...'*?{},/\\.a[]!-'.split(''))
/** Every UTF-16 code unit: NUL, control characters and lone surrogates included. */
const CODE_UNIT = fc.integer({ min: 0, max: 0xffff }).map(code => String.fromCharCode(code))

/**
 * Paths a read may use: the fixture's names, those names behind `../` runs, absolute paths into the host and into
 * the fixture, NUL bytes, URL-encoded and `~` forms, very long strings, and random ones.
 */
function readPath(fixture: HostileFixture): Arbitrary<string> {
  const named = fc.constantFrom(...fixture.names)
  const host = fc.constantFrom('/etc/passwd', '/etc/shadow', '/proc/self/environ', '/proc/self/fd/1', '/proc/1/root', '/dev/zero', '/', fixture.base, fixture.root, `${fixture.root}/notes.txt`, `${fixture.outside}/canary.txt`, `${fixture.root}/../outside/canary.txt`)
  const escapes = fc.tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom('etc/passwd', 'outside/canary.txt', 'canary.txt', 'root/notes.txt', 'proc/self/cwd')).map(([ups, rest]) => `${'../'.repeat(ups)}${rest}`)
  return fc.oneof(named, host, escapes, commonPaths(named), randomPath())
}

/**
 * Paths a write or an edit may use. No drawn path names a host file a broken resolver would clobber (/etc/passwd
 * through its link, the host root through /proc/self/root): escapes aim at the fixture's own folders and at names
 * with the fixture's token, which `escapeLeftovers` looks for.
 */
function writePath(fixture: HostileFixture): Arbitrary<string> {
  const named = fc.constantFrom(...fixture.names.filter(name => !/^(passwd|proc-root\/etc|stdin)/.test(name)))
  const token = fixture.token
  const throughLinks = fc.constantFrom('out', 'out-relative', 'parent', 'parent/..', 'parent/../..', 'src/up', 'src/up/..', 'hop-folder', 'through-subfolder', 'dangling-out-folder', `proc-root${fixture.base}`, `proc-root${fixture.outside}`, 'proc-root/tmp', 'deep/d/d/../../..', '..dir..', '~').map(prefix => `${prefix}/${token}`)
  const escapes = fc.integer({ min: 1, max: 12 }).map(ups => `${'../'.repeat(ups)}${token}`)
  const absolute = fc.constantFrom(`/tmp/${token}`, `/${token}`, `${fixture.base}/${token}`, `${fixture.outside}/canary.txt`, `${fixture.root}/${token}`, 'out-canary', 'dangling-out', 'hop')
  const relative = randomPath().filter(candidate => !candidate.startsWith('/') && !candidate.split('/').includes('..'))
  // A write creates what it names: a path that reads as a host path would show up in later listings.
  return fc.oneof(named, throughLinks, escapes, absolute, commonPaths(named), relative).filter(candidate => !HOST_MARKERS.test(candidate))
}

function commonPaths(named: Arbitrary<string>): Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('', '.', './', '//', '~', '~/x', '~root/.bashrc', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '..%2f..%2f', 'file:///etc/passwd', 'C:\\Windows', '\\..\\..\\etc'),
    named.map(name => `${name}\0.txt`),
    named.map(name => encodeURIComponent(name)),
    named.map(name => `./${name}/./`),
    fc.integer({ min: 256, max: 20_000 }).map(length => 'a'.repeat(length)),
    fc.integer({ min: 100, max: 3000 }).map(count => 'a/'.repeat(count)),
  )
}

function randomPath(): Arbitrary<string> {
  return fc.string({ unit: PATH_CHARS, minLength: 1, maxLength: 30 })
}

function regexPattern(): Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...CATASTROPHIC_PATTERNS) },
    { weight: 1, arbitrary: fc.constantFrom(...BACKREFERENCE_PATTERNS) },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_PATTERNS) },
    { weight: 3, arbitrary: fc.string({ unit: REGEX_CHARS, maxLength: 24 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 100_000 }).map(length => 'a'.repeat(length)) },
  )
}

function globPattern(): Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...GLOBS),
    fc.string({ unit: GLOB_CHARS, maxLength: 20 }),
    fc.integer({ min: 100, max: 5000 }).map(depth => `${'{'.repeat(depth)}a${'}'.repeat(depth)}`),
    fc.integer({ min: 10, max: 200 }).map(count => '{a,b}'.repeat(count)),
  )
}

/** Contents for writes and edits: random text of any code unit, large runs, many lines; never host text. */
function content(fixture: HostileFixture): Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: CODE_UNIT, maxLength: 100 }),
    fc.constantFrom('', 'a', '\n', 'old text', '\0'),
    fc.integer({ min: 0, max: 2_000_000 }).map(length => 'a'.repeat(length)),
    fc.integer({ min: 1, max: 50_000 }).map(count => 'line\n'.repeat(count)),
  ).filter(text => !HOST_MARKERS.test(text) && !text.includes(fixture.canaryText))
}

/** A read offset or limit: absent, at an extreme, out of range, or not a number at all. */
function lineNumber(): Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 40_000 }) },
    { weight: 2, arbitrary: fc.constantFrom(...OFFSETS) },
    { weight: 1, arbitrary: fc.constantFrom('1', null, true) },
  )
}

/** Drops the keys whose value is undefined: an absent field, as a model leaves it out. */
function input(fields: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as JsonObject
}

/** A drawn call of one of the six file tools against `fixture`. */
export function fileToolCall(fixture: HostileFixture): Arbitrary<FileToolCall> {
  const read = readPath(fixture)
  const maybe = <T>(value: Arbitrary<T>): Arbitrary<T | undefined> => fc.option(value, { nil: undefined })
  const wrongType = fc.constantFrom<unknown>(5, null, [], {}, true)
  const readOrWrong = fc.oneof({ weight: 9, arbitrary: read }, { weight: 1, arbitrary: wrongType })
  return fc.oneof(
    fc.record({ path: readOrWrong, offset: lineNumber(), limit: lineNumber() }).map(fields => ({ tool: 'read_file' as const, input: input(fields) })),
    fc.record({ path: writePath(fixture), content: fc.oneof({ weight: 9, arbitrary: content(fixture) }, { weight: 1, arbitrary: wrongType }) }).map(fields => ({ tool: 'write_file' as const, input: input(fields) })),
    fc.record({ path: writePath(fixture), oldText: fc.oneof(fc.constantFrom('a', 'old text', '\n', 'odd', 'line', 'x'), content(fixture)), newText: content(fixture), replaceAll: maybe(fc.boolean()) }).map(fields => ({ tool: 'edit_file' as const, input: input(fields) })),
    fc.record({ pattern: regexPattern(), path: maybe(read), glob: maybe(globPattern()) }).map(fields => ({ tool: 'grep' as const, input: input(fields) })),
    fc.record({ pattern: globPattern(), path: maybe(read) }).map(fields => ({ tool: 'glob' as const, input: input(fields) })),
    fc.record({ path: maybe(readOrWrong) }).map(fields => ({ tool: 'list_files' as const, input: input(fields) })),
  )
}
