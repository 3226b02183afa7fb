import fc from 'fast-check'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBuiltinTools } from '../../../../src/tools/builtin/create-builtin-tools'
import type { ToolDef } from '../../../../src/tools/tool'
import { ToolError } from '../../../../src/tools/tool'
import { runTool, sandboxModes } from '../tool-context'
import { fileToolCall, HOST_MARKERS } from './file-tool-inputs'
import type { FileToolCall } from './file-tool-inputs'
import { buildHostileFixture, escapeLeftovers, outsideFingerprint } from './hostile-fixture'
import type { HostileFixture } from './hostile-fixture'

// A property-based fuzz of the six file tools against one hostile workspace: random calls, up to three at once,
// with paths, patterns, globs, contents and line numbers drawn to hurt. Every call must answer a result or a
// `ToolError`, within its time limit, without a host path or a canary's text in its answer; after every run the
// folder beside the workspace is unchanged and no escaping write left a file anywhere. Runs share the workspace, so
// a failure may need the writes before it: FILE_TOOLS_FUZZ_SEED=<the seed fast-check prints> replays the whole
// sequence on a fresh fixture. FILE_TOOLS_FUZZ_RUNS sets the runs per mode.

const TIMEOUT_MS = 2000
/** What a call may take past its limit: starting and killing the worker (and bwrap) on a loaded 2-core machine. */
const MARGIN_MS = 3000
const RUNS = Number(process.env.FILE_TOOLS_FUZZ_RUNS ?? 120)
const SEED = process.env.FILE_TOOLS_FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FILE_TOOLS_FUZZ_SEED) }

interface Answer {
  text: string
  code?: string
  elapsedMs: number
}

/** Runs one drawn call: its text, or the code and message of its `ToolError`; anything else thrown fails the run. */
async function answer(tools: ReadonlyMap<string, ToolDef>, drawn: FileToolCall): Promise<Answer> {
  const tool = tools.get(drawn.tool)
  if (tool === undefined) throw new Error(`no tool ${drawn.tool}`)
  const started = performance.now()
  try {
    const result = await runTool(tool, drawn.input)
    return { text: typeof result.content === 'string' ? result.content : JSON.stringify(result.content), elapsedMs: performance.now() - started }
  } catch (error) {
    if (error instanceof ToolError) return { text: error.message, code: error.code, elapsedMs: performance.now() - started }
    throw error
  }
}

/** The answer's text without the call's own host-looking inputs, which messages may echo (as given or normalized). */
function withoutEchoes(text: string, drawn: FileToolCall, fixture: HostileFixture): string {
  const tainted = Object.values(drawn.input).filter((value): value is string => typeof value === 'string' && (HOST_MARKERS.test(value) || value.includes(fixture.base)))
  const forms = tainted.flatMap(value => [value, path.posix.normalize(value), path.relative(fixture.root, path.resolve(fixture.root, value))])
  return forms.sort((left, right) => right.length - left.length).reduce((rest, form) => (form === '' ? rest : rest.replaceAll(form, '<input>')), text)
}

function assertWellBehaved(result: Answer, drawn: FileToolCall, fixture: HostileFixture): void {
  expect(result.elapsedMs, `${drawn.tool} took ${Math.round(result.elapsedMs)} ms`).toBeLessThan(TIMEOUT_MS + MARGIN_MS)
  // The worker's answer to an exception that is neither a refusal nor a file-system error, or its death: a bug.
  expect(result.text).not.toBe('The file operation failed')
  expect(result.code).not.toBe('tool_crashed')
  const text = withoutEchoes(result.text, drawn, fixture)
  expect(text).not.toMatch(HOST_MARKERS)
  expect(text).not.toContain(fixture.base)
  expect(text).not.toContain(fixture.canaryText.trim())
}

const modes = sandboxModes('in a plain child process')

let fixture: HostileFixture
let fingerprint: string

beforeAll(async () => {
  fixture = await buildHostileFixture()
  fingerprint = await outsideFingerprint(fixture)
}, 60_000)

afterAll(async () => {
  await fixture.remove()
})

describe('cases the fuzz found, replayed one by one in a plain child process', () => {
  const call = async (tool: FileToolCall['tool'], input: FileToolCall['input']): Promise<Answer> => {
    const tools = new Map(createBuiltinTools({ root: fixture.root, files: { timeoutMs: TIMEOUT_MS } }).map(definition => [definition.spec.name, definition]))
    return answer(tools, { tool, input })
  }

  it('refuses a grep pattern V8 can parse but not compile (too large) as an invalid pattern', async () => {
    expect(await call('grep', { pattern: 'a'.repeat(50_000), path: 'src' })).toMatchObject({ code: 'invalid_pattern' })
  })

  it('refuses a glob whose braces nest thousands deep as an invalid pattern', async () => {
    const pattern = `${'{'.repeat(5000)}a${'}'.repeat(5000)}`
    expect(await call('glob', { pattern })).toMatchObject({ code: 'invalid_pattern', text: 'Invalid glob: it is too long or nests braces too deeply to compile.' })
    expect(await call('grep', { pattern: 'x', glob: pattern })).toMatchObject({ code: 'invalid_pattern' })
  })

  it('caps a glob over 1,000 paths near PATH_MAX in bytes, where its reply used to burst the worker\'s output bound', async () => {
    const result = await call('glob', { pattern: '**', path: 'long' })
    expect(result.code).toBeUndefined()
    expect(result.text).toMatch(/\n\[More than \d+ files match; narrow the pattern\.\]$/)
  })

  it('refuses an edit whose result would pass 16 MiB before building it, leaving the file as it was', async () => {
    const lines = 'line\n'.repeat(50_000)
    expect((await call('write_file', { path: 'found/lines.txt', content: lines })).text).toBe('Wrote 250000 bytes to found/lines.txt.')
    const edit = await call('edit_file', { path: 'found/lines.txt', oldText: 'line', newText: 'a'.repeat(1_000_000), replaceAll: true })
    expect(edit).toMatchObject({ code: 'file_too_large' })
    expect(edit.text).toMatch(/^Replacing 50000 occurrences would make found\/lines\.txt 50000050000 bytes/)
    expect((await call('read_file', { path: 'found/lines.txt', limit: 1 })).text).toMatch(/^1\tline\n/)
  })
})

describe.each(modes)('the file tools against a hostile workspace, %s', (_mode, sandbox) => {
  it('answer every random call with a result or a ToolError, in time, leaking nothing and writing nothing outside', async () => {
    const tools = new Map(createBuiltinTools({ root: fixture.root, files: { timeoutMs: TIMEOUT_MS, ...(sandbox ? { sandbox } : {}) } }).map(tool => [tool.spec.name, tool]))
    let answered = 0
    const property = fc.asyncProperty(fc.array(fileToolCall(fixture), { minLength: 1, maxLength: 3 }), async calls => {
      const results = await Promise.all(calls.map(drawn => answer(tools, drawn)))
      results.forEach((result, index) => assertWellBehaved(result, calls[index] as FileToolCall, fixture))
      answered += results.filter(result => result.code === undefined).length
      expect(await outsideFingerprint(fixture)).toBe(fingerprint)
      expect(await escapeLeftovers(fixture)).toEqual([])
    })
    await fc.assert(property, { numRuns: RUNS, ...SEED })
    // Refusals alone would mean the fuzz never reached the file work.
    expect(answered).toBeGreaterThan(RUNS / 10)
  }, 180_000)
})
