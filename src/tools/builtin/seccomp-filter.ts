import { endianness } from 'node:os'

/** The system calls a sandboxed command is refused (EPERM): debugging other processes, mounts, namespaces, keyrings, kernel modules, eBPF, io_uring. */
export const DENIED_SYSCALLS = [
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'personality',
  'mount', 'umount2', 'pivot_root', 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'unshare', 'setns', 'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open', 'userfaultfd',
  'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'open_by_handle_at',
  'io_uring_setup', 'io_uring_enter', 'io_uring_register',
] as const

type DeniedSyscall = (typeof DENIED_SYSCALLS)[number]

/**
 * The calls that make a name for an existing file or a link: refused besides {@link DENIED_SYSCALLS} to a process
 * bound to a folder above its own workspace (the file worker of a tenant's folder), so that it can never put a link
 * (or a link moved from a workspace) in place of a session's workspace, which the services and the sandbox open by name.
 */
export const LINK_SYSCALLS = ['symlink', 'symlinkat', 'link', 'linkat', 'rename', 'renameat', 'renameat2'] as const

type LinkSyscall = (typeof LINK_SYSCALLS)[number]

/** A kernel ABI the filter knows: its `AUDIT_ARCH_*` value and its system call numbers. */
interface Architecture {
  readonly audit: number
  readonly numbers: Readonly<Record<DeniedSyscall | 'clone' | 'clone3', number>>
  /** The link-making calls the ABI has (aarch64 has only the `*at` ones). */
  readonly linkNumbers: Readonly<Partial<Record<LinkSyscall, number>>>
  /** x86_64 also accepts x32 calls (number | 0x40000000), which would bypass a list of x86_64 numbers. */
  readonly x32Bit?: number
}

const SHARED_NUMBERS = { io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442, clone3: 435 }

const X86_64: Architecture = {
  audit: 0xc000003e,
  x32Bit: 0x40000000,
  linkNumbers: { symlink: 88, symlinkat: 266, link: 86, linkat: 265, rename: 82, renameat: 264, renameat2: 316 },
  numbers: { ...SHARED_NUMBERS, ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, personality: 135, mount: 165, umount2: 166, pivot_root: 155, unshare: 272, setns: 308, keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, userfaultfd: 323, kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176, open_by_handle_at: 304, clone: 56 },
}

/** aarch64 uses the generic table (asm-generic/unistd.h). */
const AARCH64: Architecture = {
  audit: 0xc00000b7,
  linkNumbers: { symlinkat: 36, linkat: 37, renameat: 38, renameat2: 276 },
  numbers: { ...SHARED_NUMBERS, ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, personality: 92, mount: 40, umount2: 39, pivot_root: 41, unshare: 97, setns: 268, keyctl: 219, add_key: 217, request_key: 218, bpf: 280, perf_event_open: 241, userfaultfd: 282, kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106, open_by_handle_at: 265, clone: 220 },
}

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET: `clone` may not make namespaces either. */
const CLONE_NAMESPACE_FLAGS = 0x7e020000

const LOAD_WORD = 0x20 // BPF_LD | BPF_W | BPF_ABS
const JUMP_EQUAL = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_GREATER_OR_EQUAL = 0x35 // BPF_JMP | BPF_JGE | BPF_K
const JUMP_SET = 0x45 // BPF_JMP | BPF_JSET | BPF_K
const RETURN = 0x06 // BPF_RET | BPF_K
const ALLOW = 0x7fff0000 // SECCOMP_RET_ALLOW
const ERRNO = 0x00050000 // SECCOMP_RET_ERRNO
const EPERM = 1
const ENOSYS = 38
/** Offsets in `struct seccomp_data`: the call number, the architecture, the first argument (8 bytes). */
const NUMBER_OFFSET = 0
const ARCH_OFFSET = 4
const FIRST_ARGUMENT_OFFSET = 16

/** One instruction; `whenTrue` / `whenFalse` name a label further on (unset: the next instruction). */
interface Instruction {
  code: number
  k: number
  whenTrue?: string
  whenFalse?: string
  label?: string
}

/** The denials of one architecture: every listed call and x32 calls get EPERM, `clone3` ENOSYS (libc then uses `clone`, whose flags a filter can read). */
function architectureBlock(arch: Architecture, name: string, little: boolean, denyLinks: boolean): Instruction[] {
  const deny = `${name}:deny`
  const block: Instruction[] = [{ code: LOAD_WORD, k: NUMBER_OFFSET }]
  if (arch.x32Bit !== undefined) block.push({ code: JUMP_GREATER_OR_EQUAL, k: arch.x32Bit, whenTrue: deny })
  for (const call of DENIED_SYSCALLS) block.push({ code: JUMP_EQUAL, k: arch.numbers[call], whenTrue: deny })
  if (denyLinks) for (const number of Object.values(arch.linkNumbers)) block.push({ code: JUMP_EQUAL, k: number, whenTrue: deny })
  block.push({ code: JUMP_EQUAL, k: arch.numbers.clone3, whenTrue: `${name}:enosys` })
  block.push({ code: JUMP_EQUAL, k: arch.numbers.clone, whenFalse: `${name}:allow` })
  // The flags are the low word of the argument: its first four bytes on a little-endian machine.
  block.push({ code: LOAD_WORD, k: FIRST_ARGUMENT_OFFSET + (little ? 0 : 4) }, { code: JUMP_SET, k: CLONE_NAMESPACE_FLAGS, whenTrue: deny })
  block.push({ code: RETURN, k: ALLOW, label: `${name}:allow` }, { code: RETURN, k: ERRNO | EPERM, label: deny }, { code: RETURN, k: ERRNO | ENOSYS, label: `${name}:enosys` })
  return block
}

/** Dispatches on the architecture; calls of any other ABI (i386 through `int 0x80`, arm32) are refused. */
function program(little: boolean, denyLinks: boolean): Instruction[] {
  const architectures: Array<[string, Architecture]> = [['x86_64', X86_64], ['aarch64', AARCH64]]
  const instructions: Instruction[] = [{ code: LOAD_WORD, k: ARCH_OFFSET }]
  for (const [name, arch] of architectures) {
    instructions.push({ code: JUMP_EQUAL, k: arch.audit, whenFalse: `${name}:other` }, ...architectureBlock(arch, name, little, denyLinks))
    instructions.push({ code: LOAD_WORD, k: ARCH_OFFSET, label: `${name}:other` })
  }
  instructions.push({ code: RETURN, k: ERRNO | EPERM })
  return instructions
}

function offsetTo(instructions: readonly Instruction[], from: number, label: string | undefined): number {
  if (label === undefined) return 0
  const target = instructions.findIndex(instruction => instruction.label === label)
  const offset = target - from - 1
  if (target < 0 || offset < 0 || offset > 255) throw new Error(`seccomp filter: cannot jump to ${label}`)
  return offset
}

/**
 * The seccomp filter of the sandbox as a classic BPF program (`struct sock_filter[]`, native byte order), what
 * `bwrap --seccomp FD` loads: on x86_64 and aarch64, the calls of `DENIED_SYSCALLS` and `clone` with namespace flags
 * fail with EPERM, `clone3` with ENOSYS; every other call is allowed. Calls of other ABIs fail with EPERM. With
 * `denyLinks`, the calls of {@link LINK_SYSCALLS} fail with EPERM too.
 */
export function seccompFilterProgram(options: { denyLinks?: boolean } = {}): Buffer {
  const little = endianness() === 'LE'
  const instructions = program(little, options.denyLinks === true)
  const bytes = Buffer.alloc(instructions.length * 8)
  instructions.forEach((instruction, index) => {
    const at = index * 8
    if (little) bytes.writeUInt16LE(instruction.code, at)
    else bytes.writeUInt16BE(instruction.code, at)
    bytes.writeUInt8(offsetTo(instructions, index, instruction.whenTrue), at + 2)
    bytes.writeUInt8(offsetTo(instructions, index, instruction.whenFalse), at + 3)
    if (little) bytes.writeUInt32LE(instruction.k >>> 0, at + 4)
    else bytes.writeUInt32BE(instruction.k >>> 0, at + 4)
  })
  return bytes
}
