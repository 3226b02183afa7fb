import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import type { SqliteRuntimeOptions } from 'zidane/durable/sqlite'
import { timeScriptedRun } from './scripted-run'
import type { ScriptedRunShape } from './scripted-run'
import type { Variant } from './variants'

/** Commits per turn of one run: synced (`synchronous` as configured) and unsynced (NORMAL). */
export interface CommitsPerTurn { synced: number; unsynced: number }

let sequence = 0

/** A SQLite runtime on a file of its own in a temporary folder, with `options`; `close` removes the folder. */
function sqliteOnTempFile(options: Omit<SqliteRuntimeOptions, 'path'>): { runtime: ReturnType<typeof createSqliteRuntime>; close: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'zidane-bench-sqlite-'))
  const runtime = createSqliteRuntime({ path: path.join(folder, 'sessions.db'), ...options })
  return { runtime, close: () => { runtime.close(); rmSync(folder, { recursive: true, force: true }) } }
}

/**
 * The SQLite FULL runtime with tool results committed each on its own (`foldToolResults: false`): the behaviour
 * before the fold, timed side by side with it.
 */
export function sqliteUnfoldedVariant(): Variant {
  const { runtime, close } = sqliteOnTempFile({ synchronous: 'FULL', foldToolResults: false })
  return { name: 'sqlite FULL, fold off', runOnce: async shape => timeScriptedRun(shape, runtime, { sessionId: `unfolded-${++sequence}` }), close }
}

/**
 * Counts the commits of one run of `shape` on a fresh SQLite FULL runtime (the `onCommit` hook), per model turn,
 * set-up and release included.
 */
export async function countSqliteCommits(shape: ScriptedRunShape, options: Pick<SqliteRuntimeOptions, 'foldToolResults'> = {}): Promise<CommitsPerTurn> {
  const counted = { durable: 0, light: 0 }
  let counting = false
  const { runtime, close } = sqliteOnTempFile({ synchronous: 'FULL', ...options, onCommit: strength => { if (counting) counted[strength] += 1 } })
  try {
    counting = true
    const run = await timeScriptedRun(shape, runtime, { sessionId: `counted-${++sequence}` })
    counting = false
    return { synced: counted.durable / run.turns, unsynced: counted.light / run.turns }
  } finally {
    close()
  }
}
