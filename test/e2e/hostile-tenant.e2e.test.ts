import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reachableByOthers } from '../../scripts/stack/services-user'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/** The demo model's hash of a prompt, the last part of its call ids (`demo_<turn>_<index>_<hash>`). */
function demoHash(prompt: string): string {
  let result = 0
  for (let index = 0; index < prompt.length; index++) result = (Math.imul(result, 31) + prompt.charCodeAt(index)) >>> 0
  return result.toString(36)
}

/**
 * A file whose `read_file` output (the lines up to the 256 KiB cap plus the note saying where to continue) is just
 * over the 256 KiB threshold at which outputs are persisted.
 */
function readOutputOverThreshold(): string {
  const target = 256 * 1024 - 4
  const lines: string[] = []
  let total = 0
  const add = (length: number): void => {
    if (length < 0 || length > 2000) throw new Error(`line of ${length}`)
    lines.push('x'.repeat(length))
    total += `${lines.length}\t`.length + length + 1
  }
  while (target - total > 2 * 2010) add(1998)
  add(Math.floor((target - total) / 2) - `${lines.length + 1}\t`.length - 1)
  add(target - total - `${lines.length + 1}\t`.length - 1)
  return `${lines.join('\n')}\none line past the cap\n`
}

const CANARY = 'host file: tenant B must never change it\n'
const FILE_TOOL_TIMEOUT_MS = 3000

/**
 * Tenant B attacks the stack through the file tools, over HTTP with the demo model's `tool:` and `shell:` directives,
 * while tenant A keeps working. Each attack hurt the host or every tenant before the file tools ran in the sandbox.
 */
describe('a hostile tenant against the file tools, on the real stack with the sandbox on', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ ZIDANE_FILE_TOOL_TIMEOUT_MS: String(FILE_TOOL_TIMEOUT_MS) }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  /** Runs `prompt` to its end in a session of the tenant with key index `tenant`; returns the final text. */
  const run = async (tenant: 0 | 1, session: string, prompt: string): Promise<string> => {
    const response = await s().request(`/v1/sessions/${session}/prompts?wait=true`, { method: 'POST', key: s().apiKeys[tenant], body: JSON.stringify({ prompt }) })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { text: string; status?: string }
    return body.text
  }
  const workspaceOf = async (session: string): Promise<string> => {
    // Workspaces are `<root>/<tenant>/<session id>`: the tenant folder that holds this session's.
    const root = join(s().dataDir, 'workspaces')
    const tenant = (await readdir(root)).find(entry => existsSync(join(root, entry, session)))
    if (tenant === undefined) throw new Error(`no workspace for ${session}`)
    return join(root, tenant, session)
  }
  const servicesPid = (): number | undefined => s().services().current()?.pid

  it.skipIf(process.getuid?.() !== 0)('runs the services process as nobody without capabilities when the stack runs as root', async () => {
    const status = await readFile(`/proc/${servicesPid() ?? 'missing'}/status`, 'utf8')
    if (!reachableByOthers(process.cwd())) {
      // A checkout `nobody` cannot reach (a `mktemp -d` clone is 0700): the services keep root, and the stack says why.
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe('0')
      expect(s().output()).toMatch(/services run as root: other accounts cannot reach /)
      return
    }
    expect(/^Uid:\s+(\d+)\s+(\d+)/m.exec(status)?.slice(1)).toEqual(['65534', '65534'])
    expect(status).toMatch(/^CapEff:\s+0+$/m)
  })

  it('keeps a persisted output out of a planted folder link and a planted file link: the host canary is untouched', async () => {
    const hostFolder = join(s().dataDir, 'host-canary')
    await mkdir(hostFolder)
    const canary = join(hostFolder, 'call.txt')
    await writeFile(canary, CANARY)
    const read = 'tool: read_file {"path":"big.txt"}'
    for (const [session, plant] of [['persist-folder', `ln -s ${hostFolder} tool-results`], ['persist-file', `mkdir tool-results && ln -s ${canary} tool-results/demo_0_0_${demoHash(read)}.txt`], ['persist-plain', 'true']] as const) {
      expect(await run(1, session, `shell: ${plant} && echo planted`)).toContain('planted')
      await writeFile(join(await workspaceOf(session), 'big.txt'), readOutputOverThreshold())
      const text = await run(1, session, read)
      // A refused output stays in the result (capped like any other); a kept one is a pointer to the workspace file.
      if (session === 'persist-plain') expect(text).toMatch(/^Done: \[Output of \d+ bytes persisted to tool-results\/demo_0_0_\w+\.txt\]/)
      else expect(text).toMatch(/^Done: 1\tx{1998}\n2\tx/)
    }
    expect(await readFile(canary, 'utf8')).toBe(CANARY)
    expect(await readdir(hostFolder)).toEqual(['call.txt'])
  }, 60_000)

  it('answers read_file on a 600 MB line-less file with a cut line, and the services process stays up', async () => {
    const pid = servicesPid()
    const text = await run(1, 'huge-line', 'shell: head -c 629145600 /dev/zero | tr "\\0" a > huge.txt && echo made\ntool: read_file {"path":"huge.txt"}')
    expect(text).toContain('made')
    expect(text).toContain('[line cut at 2000 characters]')
    expect(servicesPid()).toBe(pid)
  }, 90_000)

  it('answers write_file and edit_file on FIFOs with errors at once while the other tenant completes a run', async () => {
    const attack = run(1, 'fifo', 'shell: mkfifo p1 p2 p3 p4 && echo made\ntool: write_file {"path":"p1","content":"x"}\ntool: write_file {"path":"p2","content":"x"}\ntool: edit_file {"path":"p3","oldText":"a","newText":"b"}\ntool: edit_file {"path":"p4","oldText":"a","newText":"b"}')
    const other = run(0, 'fifo-bystander', 'write: notes.txt written while B attacks\nread: notes.txt')
    const [attacked, bystander] = await Promise.all([attack, other])
    expect(attacked.match(/not a regular file/g)?.length).toBe(4)
    expect(bystander).toContain('written while B attacks')
  }, 60_000)

  it('ends a regex that backtracks without end at the time limit while the other tenant is answered', async () => {
    const started = Date.now()
    const attack = run(1, 'regex', `shell: printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\\n' > a.txt && echo made\ntool: grep {"pattern":"^(a+)+\\\\1$"}\ntool: grep {"pattern":"^(a+)+$"}`)
    const latencies: number[] = []
    while (Date.now() - started < FILE_TOOL_TIMEOUT_MS) {
      const before = Date.now()
      expect((await s().request('/v1/sessions/regex-bystander', { key: s().apiKeys[0] })).status).toBeLessThan(500)
      latencies.push(Date.now() - before)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    const text = await attack
    expect(text).toContain('did not finish within 3 s')
    expect(text).toContain('No matches found.')
    expect(Math.max(...latencies)).toBeLessThan(2000)
  }, 60_000)

  it('never names a host path in a file tool error', async () => {
    const text = await run(1, 'host-paths', 'shell: ln -s /proc/self/fd/0 fd && ln -s /etc/passwd pw && echo made\ntool: read_file {"path":"fd"}\ntool: read_file {"path":"pw"}\ntool: read_file {"path":"../../etc/passwd"}')
    expect(text.match(/Access denied/g)?.length).toBe(3)
    expect(text).not.toMatch(/pipe:|socket:|\/dev\/|\/proc\/\d|zidane-e2e/)
  }, 60_000)
})
