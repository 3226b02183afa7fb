import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { demoProvider } from 'zidane/providers'
import { main } from '../../src/cli/main'
import { captureIo } from './capture-io'

let dir: string | undefined
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); dir = undefined })

function io(tty: boolean): ReturnType<typeof captureIo> {
  return captureIo({ tty, cwd: (dir ??= mkdtempSync(join(tmpdir(), 'zidane-cli-'))) })
}

/** Leaves session `s` with a run of the CLI's demo model interrupted mid-tool (a `list_files` that never returns), as a killed process would. */
async function leaveInterruptedRun(path: string): Promise<void> {
  const runtime = createSqliteRuntime({ path })
  const block: ToolDef = { spec: { name: 'list_files', description: 'x', inputSchema: { type: 'object', properties: {} } }, execute: () => new Promise(() => undefined) }
  const agent = createAgent({ provider: demoProvider(), tools: [block], durable: runtime, sessionId: 's' })
  void agent.run({ prompt: 'list: .' }).catch(() => undefined)
  await new Promise(resolve => setTimeout(resolve, 50))
  runtime.abandon()
}

describe('zidane run', () => {
  it('runs the demo model on a sessions file and prints JSON stats', async () => {
    const cli = io(false)
    expect(await main(['run', '--session-db', 'sessions.db', '--session', 'a', '--prompt', 'hello', '--json'], cli)).toBe(0)
    expect(JSON.parse(cli.out())).toMatchObject({ sessionId: 'a', status: 'completed', text: 'Echo: hello' })
  })

  it('prints a usage error with exit code 2', async () => {
    const cli = io(false)
    expect(await main(['run'], cli)).toBe(2)
    expect(cli.err()).toContain('--prompt is required')
  })

  it('resume-ask asks on a terminal and resumes the interrupted run when told yes', async () => {
    const cli = io(true)
    await leaveInterruptedRun(join(cli.cwd, 'sessions.db'))
    const exit = main(['run', '--session-db', 'sessions.db', '--session', 's', '--prompt', 'next'], cli)
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(cli.err()).toContain('has an interrupted run ("list: .")')
    cli.input.write('y\n')
    expect(await exit).toBe(0)
    expect(cli.err()).toContain('[resuming run')
  })

  it('never asks under --json, so resume-ask heals instead of resuming', async () => {
    const cli = io(true)
    await leaveInterruptedRun(join(cli.cwd, 'sessions.db'))
    expect(await main(['run', '--session-db', 'sessions.db', '--session', 's', '--prompt', 'next', '--json'], cli)).toBe(0)
    expect(cli.err()).not.toContain('interrupted run')
    const runtime = createSqliteRuntime({ path: join(cli.cwd, 'sessions.db') })
    const data = await runtime.stores.session.load('s')
    runtime.close()
    expect(data?.turns.some(turn => turn.id.startsWith('heal-'))).toBe(true)
    expect(data?.runs.map(run => run.status)).toEqual(['interrupted', 'completed'])
  })
})
