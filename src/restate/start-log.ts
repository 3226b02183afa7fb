import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Where a Restate runtime records, outside the journal, that an at-most-once step's closure is starting its effect
 * (see `RestateRuntimeOptions.startLog`). The journal alone cannot say it: the SDK starts a closure once it has handed
 * the run command to the connection, before Restate has journaled it, so a process killed right then (or a Restate
 * leader lost before the command was committed) leaves no trace, and the next attempt would run the closure as new.
 */
export interface StepStartLog {
  /**
   * Records, before the effect starts, that `step` of `invocationId` is starting; resolves once the mark is durable,
   * with `true` when an earlier attempt had already left it (its result was never journaled).
   */
  markStarted(invocationId: string, step: string): Promise<boolean>
  /** Forgets the mark once the step's result is journaled (a missing mark is fine). */
  forget(invocationId: string, step: string): Promise<void>
}

/**
 * A {@link StepStartLog} of one empty file per step in `folder`, created exclusively (an existing file is an earlier
 * attempt's mark) with `fsync` of the file and the folder (about 1 ms on a local disk), so it survives the machine,
 * not only the process. Every replica that can run a retry of the invocation must see the same folder: put it on the
 * deployment's shared workspace volume.
 */
export function createFileStartLog(folder: string): StepStartLog {
  mkdirSync(folder, { recursive: true })
  const fileOf = (invocationId: string, step: string): string => join(folder, createHash('sha256').update(`${invocationId}\0${step}`).digest('hex').slice(0, 40))
  return {
    markStarted: async (invocationId, step) => {
      const file = await open(fileOf(invocationId, step), 'wx').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return undefined
        throw error
      })
      if (!file) return true
      try {
        await file.sync()
      } finally {
        await file.close()
      }
      await syncFolder(folder)
      return false
    },
    forget: async (invocationId, step) => rm(fileOf(invocationId, step), { force: true }),
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
