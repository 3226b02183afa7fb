import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main'
import { captureIo } from './capture-io'

let dir: string | undefined
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); dir = undefined })

/** A folder with a workspace `work/` and, beside it, `secret.txt` that a command in the workspace must not read. */
function setUp(env: NodeJS.ProcessEnv = {}): ReturnType<typeof captureIo> & { secret: string } {
  dir = mkdtempSync(join(tmpdir(), 'zidane-cli-sandbox-'))
  mkdirSync(join(dir, 'work'))
  writeFileSync(join(dir, 'secret.txt'), 'secret-beside-the-workspace')
  const cli = captureIo({ tty: false, cwd: dir })
  Object.assign(cli.env, env)
  return { ...cli, secret: join(dir, 'secret.txt') }
}

/** Runs the demo model's `shell:` directive with `zidane run --json`; returns the run's final text. */
async function runShell(cli: ReturnType<typeof setUp>, command: string, flags: string[] = []): Promise<string> {
  await main(['run', '--workspace', 'work', '--json', ...flags, '--prompt', `shell: ${command}`], cli)
  return (JSON.parse(cli.out()) as { text: string }).text
}

describe('zidane run: the shell tool in the sandbox', () => {
  it('runs commands in the bubblewrap sandbox by default: files beside the workspace are out of reach, the workspace is writable', async () => {
    const cli = setUp()
    const text = await runShell(cli, `cat ${cli.secret}; echo made > made.txt; cat made.txt`)
    expect(text).not.toContain('secret-beside-the-workspace')
    expect(text).toContain('No such file or directory')
    expect(text).toContain('made')
    expect(cli.err()).toBe('')
  })

  it('--sandbox off runs them as the user, with no notice', async () => {
    const cli = setUp()
    expect(await runShell(cli, `cat ${cli.secret}`, ['--sandbox', 'off'])).toContain('secret-beside-the-workspace')
    expect(cli.err()).toBe('')
  })

  it('ZIDANE_SANDBOX=off does the same; without a usable sandbox, auto runs unsandboxed and says so', async () => {
    expect(await runShell(setUp({ ZIDANE_SANDBOX: 'off' }), 'echo $HOME')).toContain('/work')
    const cli = setUp({ ZIDANE_SANDBOX_BWRAP: '/nonexistent/bwrap' })
    expect(await runShell(cli, `cat ${cli.secret}`)).toContain('secret-beside-the-workspace')
    expect(cli.err()).toContain('zidane: shell commands run unsandboxed: the sandbox (/nonexistent/bwrap) is not usable here')
  })

  it('--sandbox required leaves shell out when the sandbox is not usable', async () => {
    const cli = setUp({ ZIDANE_SANDBOX_BWRAP: '/nonexistent/bwrap' })
    expect(await runShell(cli, `cat ${cli.secret}`, ['--sandbox', 'required'])).toContain('Unknown tool: shell')
    expect(cli.err()).toContain('zidane: the shell tool is left out')
  })

  it('refuses an unknown --sandbox value', async () => {
    const cli = setUp()
    expect(await main(['run', '--sandbox', 'maybe', '--prompt', 'hi'], cli)).toBe(2)
    expect(cli.err()).toContain('--sandbox must be auto, required or off (got maybe)')
  })
})
