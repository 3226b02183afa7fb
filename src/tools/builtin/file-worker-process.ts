import type { FileReply } from './file-worker/protocol'
import type { StartedCommand } from './run-command'

/** A file worker process and what its client knows of it: the reply bytes read so far, whether it has exited. */
export interface WarmWorker {
  process: StartedCommand
  dead: boolean
  /** Bytes of standard output not yet part of a whole reply line. */
  pending: Buffer[]
  pendingBytes: number
  /** Called on new output or on exit, while a call waits. */
  wake: (() => void) | undefined
  idleTimer: NodeJS.Timeout | undefined
}

/** How one request to a worker ended: its reply, or why there is none. */
export type Exchange = { kind: 'reply'; reply: FileReply } | { kind: 'timeout' | 'abort' | 'crash' }

const DRAIN_AFTER_EXIT_MS = 1000
/** Largest reply line a worker may send; past it the call is a crash. */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024

/** Follows the output and the end of a started worker `process`. */
export function warmWorker(process: StartedCommand): WarmWorker {
  const worker: WarmWorker = { process, dead: false, pending: [], pendingBytes: 0, wake: undefined, idleTimer: undefined }
  process.stdout.on('data', (chunk: Buffer) => {
    worker.pending.push(chunk)
    worker.pendingBytes += chunk.length
    worker.wake?.()
  })
  // What the worker prints on standard error (a crash's trace) is not the call's result: it is read and dropped.
  process.stderr.resume()
  const die = (): void => {
    if (worker.dead) return
    worker.dead = true
    clearTimeout(worker.idleTimer)
    worker.wake?.()
  }
  // Dead once its output has ended, so a reply written just before the exit is still read; the group is killed on
  // exit, so the pipe closes at once, else it is dropped after a grace time.
  process.stdout.on('close', die)
  process.onExit(() => setTimeout(() => {
    process.stdout.destroy()
    die()
  }, DRAIN_AFTER_EXIT_MS).unref())
  return worker
}

/** Sends one request line to `worker` and waits for its reply line, its death, the time limit or the abort. */
export function exchange(worker: WarmWorker, request: string, timeoutMs: number, signal: AbortSignal): Promise<Exchange> {
  return new Promise(resolve => {
    const finish = (outcome: Exchange): void => {
      worker.wake = undefined
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    const onAbort = (): void => finish({ kind: 'abort' })
    signal.addEventListener('abort', onAbort, { once: true })
    worker.wake = () => {
      const line = takeLine(worker)
      if (line !== undefined) return finish(replyOutcome(line))
      if (worker.dead || worker.pendingBytes > MAX_REPLY_BYTES) finish({ kind: 'crash' })
    }
    worker.process.stdin.write(`${request}\n`)
    worker.wake()
  })
}

/** The first whole line of `worker`'s output, taken out of its buffer; undefined while none has ended. */
function takeLine(worker: WarmWorker): string | undefined {
  const last = worker.pending.at(-1)
  if (last === undefined || !last.includes(10)) return undefined
  const output = Buffer.concat(worker.pending)
  const end = output.indexOf(10)
  const rest = output.subarray(end + 1)
  worker.pending = rest.length > 0 ? [rest] : []
  worker.pendingBytes = rest.length
  return output.subarray(0, end).toString('utf8')
}

function replyOutcome(line: string): Exchange {
  if (Buffer.byteLength(line) > MAX_REPLY_BYTES) return { kind: 'crash' }
  const reply = parseReply(line)
  return reply === undefined ? { kind: 'crash' } : { kind: 'reply', reply }
}

function parseReply(stdout: string): FileReply | undefined {
  try {
    const reply = JSON.parse(stdout) as FileReply
    return typeof reply === 'object' && reply !== null && typeof reply.ok === 'boolean' ? reply : undefined
  } catch {
    return undefined
  }
}
