/**
 * The file worker: one process serving the file-tool calls of one workspace, one at a time, started inside the
 * session's sandbox (or, without one, as a plain child process). It reads one `FileRequest` per line on standard
 * input and, for each in turn, does the file work and writes one `FileReply` line on standard output; it exits when
 * its input ends. Whatever a hostile workspace does to it (a FIFO, a line-less huge file, a regex that backtracks
 * forever) happens in this process, which the caller bounds in time and memory, never in the services' process.
 *
 * It runs under plain `node` (type stripping in development, the compiled `.js` in a build), so it imports only
 * Node's modules and its own folder, with explicit extensions.
 */
import { editFile } from './edit-file.ts'
import { FileToolFailure } from './file-tool-failure.ts'
import { globFiles } from './glob-files.ts'
import { grepFiles } from './grep-files.ts'
import { listFiles } from './list-files.ts'
import { persistOutput } from './persist-output.ts'
import type { FileReply, FileRequest } from './protocol.ts'
import { readFile } from './read-file.ts'
import { inputLines, writeOutput } from './standard-io.ts'
import { writeFile } from './write-file.ts'

async function perform(request: FileRequest): Promise<string> {
  switch (request.op) {
    case 'read': return readFile(request.root, request.path, request.offset, request.limit)
    case 'write': return writeFile(request.root, request.path, request.content, request.quotaBytes)
    case 'edit': return editFile(request.root, request.path, request, request.quotaBytes)
    case 'grep': return grepFiles(request.root, request.path, request.pattern, request.glob)
    case 'glob': return globFiles(request.root, request.path, request.pattern)
    case 'list': return listFiles(request.root, request.path)
    case 'persist': return persistOutput(request.root, request.folder, request.name, request.content, request.quotaBytes)
  }
}

function replyOf(error: unknown): FileReply {
  if (error instanceof FileToolFailure) return { ok: false, code: error.code, message: error.message }
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return { ok: false, code: 'file_system_error', message: `The file operation failed${typeof code === 'string' ? ` (${code})` : ''}` }
}

// Past RLIMIT_FSIZE (the sandbox's per-file bound) a write fails with EFBIG instead of killing the worker.
process.on('SIGXFSZ', () => undefined)

/** CPU time after which the worker retires: the sandbox's `ulimit -t` bounds a process, not a call. */
const RETIRE_CPU_MS = 60_000

async function answer(line: string): Promise<FileReply> {
  const reply = await Promise.resolve(line).then(text => JSON.parse(text) as FileRequest).then(perform).then(content => ({ ok: true as const, content }), replyOf)
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000 > RETIRE_CPU_MS ? { ...reply, retire: true } : reply
}

function send(reply: FileReply): Promise<void> {
  return writeOutput(`${JSON.stringify(reply)}\n`)
}

// Strictly one request after the other: the next line is read once the previous reply is written.
for await (const line of inputLines()) {
  const reply = await answer(line)
  await send(reply)
  if (reply.retire === true) process.exit(0)
}
process.exit(0)
