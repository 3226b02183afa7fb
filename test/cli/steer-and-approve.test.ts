import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { main } from '../../src/cli/main'
import { parseRunArgs } from '../../src/cli/parse-args'
import { parseSteerArgs } from '../../src/cli/steer-command'
import { captureIo } from './capture-io'

describe('zidane steer', () => {
  it('parses its flags and refuses missing or empty ones with the usage', () => {
    expect(parseSteerArgs(['steer', '--session-db', 'f.db', '--session', 's1', '--text', 'also B'])).toEqual({ sessionDb: 'f.db', session: 's1', text: 'also B' })
    expect(() => parseSteerArgs(['steer', '--session', 's1', '--text', 'x'])).toThrow(/--session-db, --session and --text are required/)
    expect(() => parseSteerArgs(['steer', '--session-db', 'f.db', '--session', 's1', '--text', ' '])).toThrow(/--text must not be empty/)
  })

  it('saves a message the next run of the session delivers once (before its first model request)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zidane-steer-'))
    const steer = captureIo({ tty: false, cwd: dir })
    expect(await main(['steer', '--session-db', 'sessions.db', '--session', 's1', '--text', 'mind the tests'], steer)).toBe(0)
    expect(steer.out()).toMatch(/^saved message 1 for session s1\n$/)
    const run = captureIo({ tty: false, cwd: dir })
    expect(await main(['run', '--session-db', 'sessions.db', '--session', 's1', '--prompt', 'hello', '--json'], run)).toBe(0)
    expect((JSON.parse(run.out()) as { text: string }).text).toBe('Echo: hello\nmind the tests')
    const runtime = createSqliteRuntime({ path: join(dir, 'sessions.db') })
    expect(await runtime.pendingSteering('s1')).toEqual([])
    const turns = (await runtime.stores.session.load('s1'))?.turns ?? []
    expect(turns.filter(turn => turn.id.endsWith('-t1-s')).map(turn => turn.content)).toEqual([[{ type: 'text', text: 'mind the tests' }]])
    runtime.close()
  })
})

describe('zidane run --approve / --deny', () => {
  it('parses comma-separated tool lists', () => {
    expect(parseRunArgs(['run', '--prompt', 'p', '--approve', 'shell, write_file', '--deny', 'spawn'])).toMatchObject({ approve: ['shell', 'write_file'], deny: ['spawn'] })
  })

  it('asks on a terminal before an approval tool runs: "no" gives the model a denial, and the run goes on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zidane-approve-'))
    const cli = captureIo({ tty: true, cwd: dir })
    cli.input.write('no\n')
    expect(await main(['run', '--prompt', 'write: a.txt hi', '--approve', 'write_file', '--sandbox', 'off'], cli)).toBe(0)
    expect(cli.err()).toContain('Allow write_file with {"path":"a.txt","content":"hi"}?')
    expect(cli.out()).toContain('The user did not approve this call.')
  })

  it('refuses a --deny tool with an error result', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zidane-deny-'))
    const cli = captureIo({ tty: false, cwd: dir })
    expect(await main(['run', '--prompt', 'write: a.txt hi', '--deny', 'write_file', '--json', '--sandbox', 'off'], cli)).toBe(0)
    expect((JSON.parse(cli.out()) as { text: string }).text).toBe('Done: Permission denied for write_file: refused by --deny')
  })
})
