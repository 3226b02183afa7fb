import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, HEAL_TEXT } from 'zidane'
import type { ToolDef } from 'zidane'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { demoProvider } from 'zidane/providers'
import { buildDurable } from '../../src/cli/build-durable'
import { main } from '../../src/cli/main'
import { waitFor } from '../helpers/restate/restate-harness'
import { captureIo } from './capture-io'

let dir: string | undefined
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); dir = undefined })
const folder = (): string => (dir ??= mkdtempSync(join(tmpdir(), 'zidane-cli-off-')))

/** Leaves session `s` with a `--durability off` run killed mid-tool (a `list_files` that never returns). */
async function leaveRunWithoutDurability(path: string): Promise<void> {
  const runtime = createSqliteRuntime({ path })
  let started: () => void = () => undefined
  const toolStarted = new Promise<void>(resolve => { started = resolve })
  const block: ToolDef = { spec: { name: 'list_files', description: 'x', inputSchema: { type: 'object', properties: {} } }, execute: () => { started(); return new Promise(() => undefined) } }
  const durable = buildDurable('off', runtime)
  if (!durable) throw new Error('a sessions file always gives a durable option')
  const agent = createAgent({ provider: demoProvider(), tools: [block], durable, sessionId: 's' })
  void agent.run({ prompt: 'list: .' }).catch(() => undefined)
  await toolStarted
  runtime.abandon()
}

describe('a run left by --durability off on a sessions file', () => {
  it('is healed with the heal text by the next durable run instead of failing with session_busy', async () => {
    const path = join(folder(), 'sessions.db')
    await leaveRunWithoutDurability(path)
    const cli = captureIo({ tty: false, cwd: folder() })
    expect(await main(['run', '--session-db', path, '--session', 's', '--durability', 'on', '--prompt', 'hello', '--json'], cli), cli.err()).toBe(0)
    expect(JSON.parse(cli.out())).toMatchObject({ status: 'completed', text: 'Echo: hello' })
    const runtime = createSqliteRuntime({ path })
    try {
      const session = await createAgent({ provider: demoProvider(), durable: runtime, sessionId: 's' }).session()
      const results = session.turns.flatMap(turn => turn.content).flatMap(block => block.type === 'tool_result' ? [block.content] : [])
      expect(results).toEqual([HEAL_TEXT])
      expect(session.runs.map(run => run.status)).toEqual(['interrupted', 'completed'])
    } finally {
      runtime.close()
    }
  })

  it('keeps its questions in the file, where zidane answer resolves them', async () => {
    const path = join(folder(), 'sessions.db')
    const asking = captureIo({ tty: false, cwd: folder() })
    const run = main(['run', '--session-db', path, '--session', 'q', '--durability', 'off', '--prompt', 'ask: your name?'], asking)
    // The hint prints the id as one shell word: bare when it is safe, else single-quoted.
    const id = await waitFor(() => /--id '?([^' ]+)'? --answer/.exec(asking.err())?.[1], 10_000, 'the question to be printed')
    const answering = captureIo({ tty: false, cwd: folder() })
    expect(await main(['answer', '--session-db', path, '--id', id, '--answer', 'Ada'], answering), answering.err()).toBe(0)
    expect(await run).toBe(0)
    expect(asking.out()).toContain('You said: Ada')
  })
})
