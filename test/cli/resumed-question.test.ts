import { execFile, spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { demoProvider } from 'zidane/providers'
import { createInteractionTools } from 'zidane/tools'
import { answerHint, shellWord, zidaneScriptPath } from '../../src/cli/answer-hint'
import { main } from '../../src/cli/main'
import { waitFor } from '../helpers/restate/restate-harness'
import { captureIo } from './capture-io'

const execFileAsync = promisify(execFile)
const children: ChildProcessWithoutNullStreams[] = []
let dir: string | undefined
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})
const folder = (): string => (dir ??= mkdtempSync(join(tmpdir(), 'zidane-cli-question-')))

/** Starts `zidane …` through the package's bin in `cwd` (or `program args`), not on a terminal; collects its output. */
function startCli(args: string[], cwd: string, program?: string): { child: ChildProcessWithoutNullStreams; err: () => string; out: () => string } {
  const env = { ...process.env }
  delete env.ANTHROPIC_API_KEY
  const child = program === undefined ? spawn(process.execPath, [zidaneScriptPath(), ...args], { cwd, env }) : spawn(program, args, { cwd, env })
  children.push(child)
  let err = ''
  let out = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  return { child, err: () => err, out: () => out }
}

/** The answer command a waiting run printed (the part after `waiting for an answer: `), all of them in order. */
function printedHints(stderr: string): string[] {
  return [...stderr.matchAll(/waiting for an answer: (.*)\n/g)].map(match => match[1] as string)
}

describe('the answer hint of a waiting run', () => {
  it('names this node and this installation\'s script by absolute path, quoted for the shell', () => {
    expect(answerHint('/data/my sessions.db', 'q-1', '/opt/node/bin/node', '/app/bin/zidane.mjs')).toBe(`/opt/node/bin/node /app/bin/zidane.mjs answer --session-db '/data/my sessions.db' --id q-1 --answer "…"`)
    expect(shellWord(`it's`)).toBe(`'it'\\''s'`)
    expect(zidaneScriptPath()).toBe(join(process.cwd(), 'bin', 'zidane.mjs'))
  })

  /** Starts a run that asks, waits until it printed its answer hint, kills it with SIGKILL; returns the hint. */
  async function killWhileWaiting(cwd: string): Promise<string> {
    const first = startCli(['run', '--session-db', 'sessions.db', '--session', 's', '--prompt', 'ask: favourite colour?'], cwd)
    await waitFor(() => printedHints(first.err()).length === 1, 30_000)
    first.child.kill('SIGKILL')
    await new Promise(resolve => first.child.once('exit', resolve))
    return printedHints(first.err())[0] as string
  }

  it('the printed command answers the question of a killed run from another folder; the next run continues with it', async () => {
    const cwd = folder()
    const hint = await killWhileWaiting(cwd)
    expect(hint).toContain(`${process.execPath} ${zidaneScriptPath()} answer --session-db ${join(cwd, 'sessions.db')} --id `)
    const { stdout } = await execFileAsync('sh', ['-c', hint.replace('"…"', 'blue')], { cwd: '/', env: { PATH: '/usr/bin:/bin' } })
    expect(stdout).toMatch(/^answered /)
    const next = startCli(['run', '--session-db', 'sessions.db', '--session', 's', '--durability', 'on', '--prompt', 'next'], cwd)
    expect(await new Promise(resolve => next.child.once('exit', resolve))).toBe(0)
    expect(next.out()).toContain('You said: blue')
  }, 90_000)

  it('resume-ask on a terminal, after the run was killed, prints the question again and takes the answer there', async () => {
    const cwd = folder()
    await killWhileWaiting(cwd)
    // `script` gives the command a terminal, as a person running it has.
    const command = [process.execPath, zidaneScriptPath(), 'run', '--session-db', 'sessions.db', '--session', 's', '--prompt', 'next'].map(shellWord).join(' ')
    const resumed = startCli(['-qec', command, '/dev/null'], cwd, 'script')
    await waitFor(() => resumed.out().includes('Resume it?'), 30_000)
    resumed.child.stdin.write('y\n')
    await waitFor(() => resumed.out().includes('favourite colour?'), 30_000)
    resumed.child.stdin.write('green\n')
    expect(await new Promise(resolve => resumed.child.once('exit', resolve))).toBe(0)
    expect(resumed.out()).toContain('You said: green')
  }, 90_000)

  it('resume-ask on a terminal asks the question of the resumed run again', async () => {
    const path = join(folder(), 'sessions.db')
    const runtime = createSqliteRuntime({ path })
    const tools: ToolDef[] = createInteractionTools({ requestInteraction: () => undefined })
    const agent = createAgent({ provider: demoProvider(), tools, durable: runtime, sessionId: 's' })
    const asked = new Promise<void>(resolve => { agent.hooks.hook('interaction:request', () => resolve()) })
    void agent.run({ prompt: 'ask: which region?' }).catch(() => undefined)
    await asked
    runtime.abandon()

    const cli = captureIo({ tty: true, cwd: folder() })
    const exit = main(['run', '--session-db', path, '--session', 's', '--prompt', 'next'], cli)
    await waitFor(() => cli.err().includes('Resume it?'), 10_000)
    cli.input.write('y\n')
    await waitFor(() => cli.err().includes('which region?'), 10_000)
    cli.input.write('eu-west\n')
    expect(await exit).toBe(0)
    expect(cli.out() + cli.err()).toContain('You said: eu-west')
  })
})
