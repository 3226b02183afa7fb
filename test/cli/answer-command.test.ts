import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { main } from '../../src/cli/main'
import { parseAnswerArgs } from '../../src/cli/answer-command'
import { captureIo } from './capture-io'

function io() {
  const captured = captureIo({ tty: false, cwd: tmpdir() })
  return { io: captured, out: captured.out, err: captured.err }
}

describe('zidane answer', () => {
  it('parses its flags and refuses missing ones with the usage', () => {
    expect(parseAnswerArgs(['answer', '--session-db', 'f.db', '--id', 'awk_1', '--answer', 'yes'])).toEqual({ sessionDb: 'f.db', id: 'awk_1', answer: 'yes' })
    expect(() => parseAnswerArgs(['answer', '--id', 'awk_1'])).toThrow(/--session-db, --id and --answer are required/)
    expect(() => parseAnswerArgs(['answer', '--color', 'red'])).toThrow(/Unknown option: --color/)
  })

  it('answers a question another process waits on, through the sessions file', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'zidane-answer-')), 'sessions.db')
    const waiting = createSqliteRuntime({ path })
    const awakeable = waiting.awakeable<string>(stepKey('run_1_abc', 'custom', 't1', 'call_1', 'awakeable'))
    waiting.flush() // a run commits its question before it prints it; do the same here
    const cli = io()
    expect(await main(['answer', '--session-db', path, '--id', awakeable.id, '--answer', 'blue'], cli.io)).toBe(0)
    expect(cli.out()).toContain(`answered ${awakeable.id}`)
    await expect(awakeable.wait()).resolves.toEqual({ timedOut: false, value: 'blue' })
    const again = io()
    expect(await main(['answer', '--session-db', path, '--id', awakeable.id, '--answer', 'green'], again.io)).toBe(1)
    expect(again.err()).toContain('the first answer stands')
    const unknown = io()
    expect(await main(['answer', '--session-db', path, '--id', 'awk_nope', '--answer', 'x'], unknown.io)).toBe(1)
    expect(unknown.err()).toContain('no open question awk_nope')
    waiting.close()
  })

  it('exits 2 with the usage on bad flags', async () => {
    const cli = io()
    expect(await main(['answer', '--id', 'x'], cli.io)).toBe(2)
    expect(cli.err()).toContain('Usage: zidane answer')
  })
})
