import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bubblewrapSandbox } from '../../../src/tools/builtin/command-sandbox'
import { shellTool } from '../../../src/tools/builtin/shell-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import { runTool, textOf, useSandbox } from './tool-context'

/** System call numbers the probe below calls, per architecture (x86_64 table, then the generic one of aarch64). */
const NUMBERS = {
  x64: { ptrace: 101, unshare: 272, mount: 165, personality: 135, keyctl: 250, bpf: 321, io_uring_setup: 425, clone3: 435, getpid: 39 },
  arm64: { ptrace: 117, unshare: 97, mount: 40, personality: 92, keyctl: 219, bpf: 280, io_uring_setup: 425, clone3: 435, getpid: 172 },
}[process.arch as 'x64' | 'arm64']

/** A perl script printing `name errno` (0 on success) for each call an attacker would try. */
function syscallProbe(): string {
  const n = NUMBERS ?? NUMBERS_MISSING()
  const calls = [
    `show("ptrace", syscall(${n.ptrace}, 0, 0, 0, 0))`, // PTRACE_TRACEME
    `show("unshare", syscall(${n.unshare}, 0x10020000))`, // CLONE_NEWUSER | CLONE_NEWNS: a namespace of its own, where mount is allowed
    `show("mount", syscall(${n.mount}, $source, $target, $type, 0, 0))`,
    `show("personality", syscall(${n.personality}, 0x0040000))`, // ADDR_NO_RANDOMIZE
    `show("keyctl", syscall(${n.keyctl}, 0, 0, 0, 0))`,
    `show("bpf", syscall(${n.bpf}, 0, 0, 0))`,
    `show("io_uring_setup", syscall(${n.io_uring_setup}, 1, $params))`,
    `show("clone3", syscall(${n.clone3}, 0, 0))`,
    `show("getpid", syscall(${n.getpid}) > 0 ? 0 : -1)`,
  ]
  const prelude = 'sub show { my ($name, $result) = @_; print "$name ", ($result == -1 ? $! + 0 : 0), "\\n" } my ($source, $target, $type, $params) = ("none", "/tmp/m", "tmpfs", "\\0" x 120); mkdir "/tmp/m";'
  return `perl -e '${prelude} ${calls.join('; ')}'`
}

function NUMBERS_MISSING(): never {
  throw new Error(`no system call numbers for ${process.arch}`)
}

describe('the holes a hostile tenant looks for in the bubblewrap sandbox', () => {
  const folders = useSandbox()
  const shell = (): ReturnType<typeof shellTool> => shellTool(createWorkspace(folders.root), { sandbox: bubblewrapSandbox({ cgroupName: `zidane-test-${process.pid}` }), tenant: 'attacker', timeoutMs: 20_000 })

  it('sees system folders only (no /opt) and runs with the fixed system PATH, not the host one', async () => {
    const result = await runTool(shell(), { command: 'test -e /opt && echo "opt visible: $(ls /opt | head -3)" || echo "no /opt"; echo "PATH=$PATH"' })
    const text = textOf(result.content)
    expect(text).toContain('no /opt')
    expect(text).toContain('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n')
  })

  it('gets EPERM from ptrace, unshare, mount and the rest of the deny list; clone3 ENOSYS; ordinary calls work', async () => {
    const result = await runTool(shell(), { command: syscallProbe() })
    const errors = Object.fromEntries(textOf(result.content).split('\n').map(line => line.split(' ')).filter(([, errno]) => /^\d+$/.test(errno ?? '')).map(([name, errno]) => [name, Number(errno)]))
    expect(errors).toEqual({ ptrace: 1, unshare: 1, mount: 1, personality: 1, keyctl: 1, bpf: 1, io_uring_setup: 1, clone3: 38, getpid: 0 })
  })

  it('creates private files: the umask is 077, so folders are 0700 and files 0600', async () => {
    const result = await runTool(shell(), { command: 'umask; mkdir made && echo secret > made/file && echo secret > top' })
    expect(textOf(result.content)).toContain('0077')
    const mode = async (relative: string): Promise<string> => ((await stat(path.join(folders.root, relative))).mode & 0o777).toString(8)
    expect([await mode('made'), await mode('made/file'), await mode('top')]).toEqual(['700', '600', '600'])
    expect(await readdir(folders.root)).toEqual(['made', 'top'])
  })
})
