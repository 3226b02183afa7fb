/**
 * The file calls of the worker, made synchronously behind the promise API of `node:fs/promises` (the part the worker
 * uses). The worker serves one call at a time, so nothing waits while a file call runs, and each call of
 * `fs/promises` went through libuv's thread pool and back: two thread switches per call, a dozen calls per tool call,
 * 0.7 ms of CPU per small `write_file` where the calls themselves take a tenth of it. A call that blocks (a slow
 * disk) holds the worker as it held the call before; the caller's time limit kills the worker either way. Errors are
 * the same `ErrnoException`s, as rejections.
 */
import { closeSync, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, opendirSync, readSync, realpathSync, writeSync } from 'node:fs'
import type { Dirent, MakeDirectoryOptions, Mode, OpenDirOptions, Stats } from 'node:fs'

/** An open file, as much of `fs/promises`' `FileHandle` as the worker uses (a `FileHandle` is one too). */
export interface WorkerFileHandle {
  readonly fd: number
  stat(): Promise<Stats>
  read(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>
  write(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>
  writeFile(data: Buffer): Promise<void>
  truncate(length?: number): Promise<void>
  close(): Promise<void>
}

/** A {@link WorkerFileHandle} on synchronous calls; closing it twice closes it once. */
export class SyncFileHandle implements WorkerFileHandle {
  readonly fd: number
  private closed = false

  // No parameter properties: the file worker runs this file with types stripped, which refuses them.
  constructor(fd: number) {
    this.fd = fd
  }

  async stat(): Promise<Stats> {
    return fstatSync(this.fd)
  }

  /** Reads up to `length` bytes into `buffer` at `offset`, from `position` (null: the file's current position). */
  async read(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number; buffer: Buffer }> {
    return { bytesRead: readSync(this.fd, buffer, offset, length, position), buffer }
  }

  /** Writes up to `length` bytes of `buffer` from `offset`, at `position` (null: the file's current position). */
  async write(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number; buffer: Buffer }> {
    return { bytesWritten: writeSync(this.fd, buffer, offset, length, position), buffer }
  }

  /** Writes all of `data` from the file's current position. */
  async writeFile(data: Buffer): Promise<void> {
    for (let done = 0; done < data.length;) done += writeSync(this.fd, data, done, data.length - done)
  }

  async truncate(length = 0): Promise<void> {
    ftruncateSync(this.fd, length)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }
}

/** `open(2)` of `path`: a {@link SyncFileHandle}. */
export async function open(path: string, flags: number, mode?: Mode): Promise<SyncFileHandle> {
  return new SyncFileHandle(openSync(path, flags, mode))
}

export async function lstat(path: string): Promise<Stats> {
  return lstatSync(path)
}

export async function mkdir(path: string, options: MakeDirectoryOptions & { recursive?: false }): Promise<void> {
  mkdirSync(path, options)
}

/** `realpath(3)`, as `fs/promises.realpath` calls it. */
export async function realpath(path: string): Promise<string> {
  return realpathSync.native(path)
}

/** The entries of the folder at `path`, read as they are iterated; the folder is closed when the iteration ends or stops. */
export async function opendir(path: string, options?: OpenDirOptions): Promise<AsyncIterable<Dirent>> {
  const folder = opendirSync(path, options)
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) yield entry
      } finally {
        folder.closeSync()
      }
    },
  }
}
