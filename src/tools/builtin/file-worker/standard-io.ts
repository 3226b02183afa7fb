/**
 * The worker's standard input and output, read and written on their file descriptors: `process.stdin` and
 * `process.stdout` on a pipe load Node's network streams, and `readline` more, about 4 ms of CPU together, a tenth of
 * a cold worker's start. Both descriptors stay blocking pipes (nothing turns them into Node streams), and they are
 * read and written synchronously: the worker has nothing else to do while it waits for its next request, and going
 * through libuv's thread pool cost two thread switches per read and per write. Should one be non-blocking after all, a
 * read or write that would block is tried again shortly.
 */
import { readSync, writeSync } from 'node:fs'

const INPUT = 0
const OUTPUT = 1
const CHUNK_BYTES = 64 * 1024
const RETRY_MS = 2

function wouldBlock(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK'
}

/** Runs `attempt` until it does not fail with "would block" (waiting a little between tries), and returns its result. */
async function retried<T>(attempt: () => T): Promise<T> {
  for (;;) {
    try {
      return attempt()
    } catch (error) {
      if (!wouldBlock(error as NodeJS.ErrnoException)) throw error
    }
    await new Promise(resolve => setTimeout(resolve, RETRY_MS))
  }
}

/** The lines of standard input, each once it has ended (the last even without its end of line), until the input ends. */
export async function* inputLines(): AsyncGenerator<string> {
  let parts: Buffer[] = []
  for (;;) {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
    const bytes = await retried(() => readSync(INPUT, buffer, 0, CHUNK_BYTES, null))
    if (bytes === 0) break
    const chunk = buffer.subarray(0, bytes)
    // A copy, so a line arriving in small pieces does not hold a whole chunk per piece.
    if (!chunk.includes(10)) {
      parts.push(Buffer.from(chunk))
      continue
    }
    let data = Buffer.concat([...parts, chunk])
    for (let end = data.indexOf(10); end >= 0; end = data.indexOf(10)) {
      yield data.subarray(0, end).toString('utf8')
      data = data.subarray(end + 1)
    }
    parts = data.length > 0 ? [Buffer.from(data)] : []
  }
  if (parts.length > 0) yield Buffer.concat(parts).toString('utf8')
}

/** Writes all of `text` to standard output. */
export async function writeOutput(text: string): Promise<void> {
  for (let data = Buffer.from(text); data.length > 0;) {
    const written = await retried(() => writeSync(OUTPUT, data, 0, data.length, null))
    data = data.subarray(written)
  }
}
