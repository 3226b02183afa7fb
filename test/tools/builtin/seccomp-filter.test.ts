import { describe, expect, it } from 'vitest'
import { DENIED_SYSCALLS, seccompFilterProgram } from '../../../src/tools/builtin/seccomp-filter'

const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const ENOSYS = 0x00050026

/** Runs the classic BPF `program` (little-endian) on a `seccomp_data` of `arch`, call `number` and first argument `flags`, as the kernel would. */
function runFilter(program: Buffer, arch: number, number: number, flags = 0): number {
  const data = Buffer.alloc(64)
  data.writeUInt32LE(number, 0)
  data.writeUInt32LE(arch, 4)
  data.writeUInt32LE(flags, 16)
  let accumulator = 0
  for (let pc = 0; pc < program.length / 8; pc++) {
    const [code, jumpTrue, jumpFalse, k] = [program.readUInt16LE(pc * 8), program.readUInt8(pc * 8 + 2), program.readUInt8(pc * 8 + 3), program.readUInt32LE(pc * 8 + 4)]
    if (code === 0x06) return k
    if (code === 0x20) accumulator = data.readUInt32LE(k)
    else {
      const taken = code === 0x15 ? accumulator === k : code === 0x35 ? accumulator >= k : code === 0x45 ? (accumulator & k) !== 0 : undefined
      if (taken === undefined) throw new Error(`unexpected instruction ${code}`)
      pc += taken ? jumpTrue : jumpFalse
    }
  }
  throw new Error('the program ran off its end')
}

const architectures = [
  { name: 'x86_64', audit: 0xc000003e, numbers: { ptrace: 101, unshare: 272, mount: 165, io_uring_enter: 426, clone: 56, clone3: 435, getpid: 39, write: 1 } },
  { name: 'aarch64', audit: 0xc00000b7, numbers: { ptrace: 117, unshare: 97, mount: 40, io_uring_enter: 426, clone: 220, clone3: 435, getpid: 172, write: 64 } },
]

describe('the sandbox seccomp filter', () => {
  const program = seccompFilterProgram()

  it('lists the calls a hostile command could use against the kernel or other processes', () => {
    expect(DENIED_SYSCALLS).toEqual(expect.arrayContaining(['ptrace', 'mount', 'umount2', 'pivot_root', 'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open', 'userfaultfd', 'kexec_load', 'init_module', 'finit_module', 'delete_module', 'unshare', 'setns', 'process_vm_readv', 'process_vm_writev', 'personality', 'io_uring_setup', 'io_uring_enter', 'io_uring_register']))
  })

  for (const { name, audit, numbers } of architectures) {
    it(`on ${name}: refuses the denied calls with EPERM, clone3 with ENOSYS, clone only with namespace flags`, () => {
      for (const call of ['ptrace', 'unshare', 'mount', 'io_uring_enter'] as const) expect(runFilter(program, audit, numbers[call])).toBe(EPERM)
      expect(runFilter(program, audit, numbers.clone3)).toBe(ENOSYS)
      expect(runFilter(program, audit, numbers.clone, 0x10000000 | 17)).toBe(EPERM) // CLONE_NEWUSER | SIGCHLD
      expect(runFilter(program, audit, numbers.clone, 0x01200000 | 17)).toBe(ALLOW) // fork's flags
      expect(runFilter(program, audit, numbers.getpid)).toBe(ALLOW)
      expect(runFilter(program, audit, numbers.write)).toBe(ALLOW)
    })
  }

  it('refuses x32 calls on x86_64 and every call of another ABI (i386 through int 0x80, arm32)', () => {
    expect(runFilter(program, 0xc000003e, 0x40000000 | 39)).toBe(EPERM)
    expect(runFilter(program, 0x40000003, 20)).toBe(EPERM)
    expect(runFilter(program, 0x40000028, 20)).toBe(EPERM)
  })
})
