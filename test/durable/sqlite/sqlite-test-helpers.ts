import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import type { SqliteRuntime, SqliteRuntimeOptions } from 'zidane/durable/sqlite'

/** A temp directory removed after the test, and runtimes closed after the test. */
export function useTempFiles(): { dir: () => string; dbPath: () => string; open: (options?: Partial<SqliteRuntimeOptions>) => SqliteRuntime } {
  let dir: string | undefined
  const runtimes: SqliteRuntime[] = []
  afterEach(() => {
    for (const runtime of runtimes.splice(0)) { try { runtime.close() } catch { /* closed or abandoned */ } }
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })
  const getDir = (): string => (dir ??= mkdtempSync(join(tmpdir(), 'zidane-sqlite-')))
  return {
    dir: getDir,
    dbPath: () => join(getDir(), 'sessions.db'),
    open: (options = {}) => {
      const runtime = createSqliteRuntime({ path: join(getDir(), 'sessions.db'), ...options })
      runtimes.push(runtime)
      return runtime
    },
  }
}
