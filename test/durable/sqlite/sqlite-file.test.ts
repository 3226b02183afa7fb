import { writeFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import type { SessionTurn } from 'zidane/session'
import { createSqliteRuntime, SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from 'zidane/durable/sqlite'
import { useTempFiles } from './sqlite-test-helpers'

describe('the sessions file: schema, migrations and refusals', () => {
  const files = useTempFiles()

  it('opens a file at schema version 1, migrates it and keeps its sessions', async () => {
    const db = new DatabaseSync(files.dbPath())
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);')
    db.exec(SQLITE_MIGRATIONS[0] as string)
    const header = { schemaVersion: 1, id: 'old', status: 'completed', runs: [], createdAt: 1, updatedAt: 2, metadata: { from: 'v1' } }
    db.prepare('INSERT INTO sessions (id, status, header, updated_at) VALUES (?, ?, ?, ?)').run('old', 'completed', JSON.stringify(header), 2)
    db.prepare('INSERT INTO turns (session_id, seq, turn_id, turn) VALUES (?, 1, ?, ?)').run('old', 't1', JSON.stringify({ id: 't1', runId: 'r', role: 'user', content: [{ type: 'text', text: 'hi' }], createdAt: 1 }))
    db.prepare("INSERT INTO awakeables (id, run_id) VALUES ('awk_1', 'r')").run()
    db.close()
    const runtime = files.open()
    const loaded = await runtime.stores.session.load('old')
    expect(loaded).toMatchObject({ id: 'old', status: 'completed', metadata: { from: 'v1' }, turns: [{ id: 't1' }] })
    expect(await runtime.pendingAwakeables()).toEqual([{ id: 'awk_1', runId: 'r' }])
    runtime.close()
    const check = new DatabaseSync(files.dbPath())
    expect(check.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SQLITE_SCHEMA_VERSION })
    check.close()
  })

  it('migrates a version 2 file to keyed steps and rowid turns, keeping turn order and recorded steps', async () => {
    const db = new DatabaseSync(files.dbPath())
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (2);')
    db.exec(SQLITE_MIGRATIONS[0] as string)
    db.exec(SQLITE_MIGRATIONS[1] as string)
    const header = { schemaVersion: 1, id: 's2', status: 'idle', runs: [], createdAt: 1, updatedAt: 2, metadata: {} }
    db.prepare('INSERT INTO sessions (id, status, header, updated_at) VALUES (?, ?, ?, ?)').run('s2', 'idle', JSON.stringify(header), 2)
    const turnOf = (id: string): SessionTurn => ({ id, runId: 'r', role: 'user', content: [{ type: 'text', text: id }], createdAt: 1 })
    // Inserted out of order: the order is the seq column's, not the insertion's.
    for (const [seq, id] of [[3, 't3'], [1, 't1'], [2, 't2']] as const) db.prepare('INSERT INTO turns (session_id, seq, turn_id, turn) VALUES (?, ?, ?, ?)').run('s2', seq, id, JSON.stringify(turnOf(id)))
    const key = stepKey('run_a', 'model', 't1')
    db.prepare('INSERT INTO steps (name, run_id, value) VALUES (?, ?, ?)').run(key.name, 'run_a', JSON.stringify({ answer: 42 }))
    db.close()
    const runtime = files.open()
    expect((await runtime.stores.session.load('s2'))?.turns.map(loaded => loaded.id)).toEqual(['t1', 't2', 't3'])
    await runtime.stores.session.appendTurns('s2', [turnOf('t4'), turnOf('t1')])
    runtime.flush()
    expect((await runtime.stores.session.load('s2'))?.turns.map(loaded => loaded.id)).toEqual(['t1', 't2', 't3', 't4'])
    expect(await runtime.step(key, async () => ({ answer: 0 }))).toEqual({ answer: 42 })
  })

  it('refuses a file with a newer schema version', () => {
    files.open().close()
    const db = new DatabaseSync(files.dbPath())
    db.exec('UPDATE schema_version SET version = 99')
    db.close()
    expect(() => createSqliteRuntime({ path: files.dbPath() })).toThrow(expect.objectContaining({ code: 'sqlite_schema_newer', message: expect.stringContaining('schema version 99') }))
  })

  it('refuses a corrupt file with a clear error and leaves it untouched', () => {
    const garbage = Buffer.alloc(8192, 0x5a)
    writeFileSync(files.dbPath(), garbage)
    expect(() => createSqliteRuntime({ path: files.dbPath() })).toThrow(expect.objectContaining({ code: 'sqlite_corrupt', name: 'DurableError' }))
  })

  it('refuses an SQLite file of another application', () => {
    const db = new DatabaseSync(files.dbPath())
    db.exec('CREATE TABLE notes (body TEXT)')
    db.close()
    expect(() => createSqliteRuntime({ path: files.dbPath() })).toThrow(expect.objectContaining({ code: 'sqlite_foreign' }))
  })

  it('reports a file locked by another process instead of waiting forever', () => {
    const db = new DatabaseSync(files.dbPath())
    db.exec('PRAGMA locking_mode = EXCLUSIVE; CREATE TABLE schema_version (version INTEGER NOT NULL); BEGIN EXCLUSIVE; INSERT INTO schema_version VALUES (2);')
    try {
      expect(() => createSqliteRuntime({ path: files.dbPath(), busyTimeoutMs: 50 })).toThrow(expect.objectContaining({ code: 'sqlite_locked' }))
    } finally {
      db.exec('ROLLBACK')
      db.close()
    }
  })
})
