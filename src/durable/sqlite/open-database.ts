import { DatabaseSync } from 'node:sqlite'
import { DurableError } from '../../errors/zidane-error'
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from './schema'

/** How the file is opened: its path and how long to wait for another writer. */
export interface OpenDatabaseOptions {
  path: string
  busyTimeoutMs: number
}

/**
 * Opens (or creates) a sessions file in WAL mode and brings its schema to `SQLITE_SCHEMA_VERSION`. A corrupt,
 * locked, foreign or newer file is refused with a `DurableError` (`sqlite_corrupt`, `sqlite_locked`,
 * `sqlite_foreign`, `sqlite_schema_newer`); nothing is written to it.
 */
export function openDatabase(options: OpenDatabaseOptions): DatabaseSync {
  let db: DatabaseSync | undefined
  try {
    db = new DatabaseSync(options.path)
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`)
    const mode = db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode?: string } | undefined
    if (mode?.journal_mode !== 'wal') throw new DurableError(`${options.path}: could not switch to WAL mode (got ${String(mode?.journal_mode)}).`, 'sqlite_open_failed')
    migrate(db, options.path)
    return db
  } catch (error) {
    try { db?.close() } catch { /* already failing */ }
    throw toDurableError(error, options.path)
  }
}

function migrate(db: DatabaseSync, path: string): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    const version = readVersion(db, path)
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new DurableError(`${path} has schema version ${version}; this build of zidane reads up to ${SQLITE_SCHEMA_VERSION}. Upgrade zidane to open it.`, 'sqlite_schema_newer')
    }
    for (let next = version + 1; next <= SQLITE_SCHEMA_VERSION; next++) db.exec(SQLITE_MIGRATIONS[next - 1] as string)
    if (version === 0) db.exec(`INSERT INTO schema_version (version) VALUES (${SQLITE_SCHEMA_VERSION})`)
    else if (version < SQLITE_SCHEMA_VERSION) db.exec(`UPDATE schema_version SET version = ${SQLITE_SCHEMA_VERSION}`)
    db.exec('COMMIT')
  } catch (error) {
    db.exec('ROLLBACK')
    throw error
  }
}

function readVersion(db: DatabaseSync, path: string): number {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
  if (tables.some(table => table.name === 'schema_version')) {
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null } | undefined
    return row?.version ?? 0
  }
  if (tables.length > 0) throw new DurableError(`${path} is an SQLite file of another application (it has no schema_version table); zidane will not write to it.`, 'sqlite_foreign')
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)')
  return 0
}

/** Maps an SQLite failure to a `DurableError` whose code says what is wrong with the file. */
export function toDurableError(error: unknown, path: string): Error {
  if (error instanceof DurableError) return error
  const errcode = (error as { errcode?: number }).errcode
  const message = error instanceof Error ? error.message : String(error)
  const primary = errcode === undefined ? undefined : errcode & 0xff
  if (primary === 26 || primary === 11 || /not a database|malformed/i.test(message)) {
    return new DurableError(`${path} is not a readable zidane sessions file (corrupt or not SQLite): ${message}`, 'sqlite_corrupt', error)
  }
  if (primary === 5 || primary === 6 || /locked|busy/i.test(message)) {
    return new DurableError(`${path} is locked by another process: ${message}`, 'sqlite_locked', error)
  }
  return new DurableError(`${path}: ${message}`, 'sqlite_failure', error)
}
