/**
 * The file worker: one process per file-tool call, started inside the session's sandbox (or, without one, as a plain
 * child process). It reads one `FileRequest` on standard input, does the file work and writes one `FileReply` on
 * standard output. Whatever a hostile workspace does to it (a FIFO, a line-less huge file, a regex that backtracks
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

async function readRequest(): Promise<FileRequest> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as FileRequest
}

function replyOf(error: unknown): FileReply {
  if (error instanceof FileToolFailure) return { ok: false, code: error.code, message: error.message }
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return { ok: false, code: 'file_system_error', message: `The file operation failed${typeof code === 'string' ? ` (${code})` : ''}` }
}

// Past RLIMIT_FSIZE (the sandbox's per-file bound) a write fails with EFBIG instead of killing the worker.
process.on('SIGXFSZ', () => undefined)

const reply: FileReply = await readRequest().then(perform).then(content => ({ ok: true as const, content }), replyOf)
process.stdout.write(JSON.stringify(reply), () => process.exit(0))
