import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { createDefaultRuntime } from 'zidane/durable'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import type { SqliteRuntime } from 'zidane/durable/sqlite'
import type { BenchServer } from './restate-server'
import type { BenchRunRequest, BenchRunResult } from './restate-services'
import type { ScriptedRunShape } from './scripted-run'
import { timeScriptedRun } from './scripted-run'

/** One way of running the scripted run; `runOnce` resolves with the wall time and model turns of one run. */
export interface Variant {
  name: string
  runOnce(shape: ScriptedRunShape): Promise<{ wallMs: number; turns: number; invocationId?: string }>
  close?(): void
}

let sequence = 0
const nextKey = (prefix: string): string => `${prefix}-${process.pid}-${++sequence}`

/** The floor: the default runtime, which records nothing. */
export function defaultVariant(): Variant {
  return { name: 'default', runOnce: async shape => timeScriptedRun(shape, createDefaultRuntime(), { sessionId: nextKey('default') }) }
}

/** The SQLite runtime on a file of its own in a temporary folder (the same file system as the Restate data). */
export function sqliteVariant(synchronous: 'FULL' | 'NORMAL'): Variant & { runtime: SqliteRuntime } {
  const folder = mkdtempSync(path.join(tmpdir(), 'zidane-bench-sqlite-'))
  const runtime = createSqliteRuntime({ path: path.join(folder, 'sessions.db'), synchronous })
  return {
    name: `sqlite ${synchronous}`,
    runtime,
    runOnce: async shape => timeScriptedRun(shape, runtime, { sessionId: nextKey('sqlite') }),
    close: () => { runtime.close(); rmSync(folder, { recursive: true, force: true }) },
  }
}

/** A Restate object of the bench services, one fresh key per run; the wall time is measured inside the handler. */
export function restateVariant(name: string, server: BenchServer, objectName: string, switches: Pick<BenchRunRequest, 'coalesce' | 'memorySession'> = {}): Variant {
  return {
    name,
    async runOnce(shape) {
      const request: BenchRunRequest = { ...shape, ...switches }
      const { body } = await server.call<BenchRunResult>(`${objectName}/${nextKey(objectName)}/run`, request)
      return body
    },
  }
}

/** Bare `ctx.run` round trips on the same server: ms per step of a handler awaiting `steps` trivial runs. */
export async function bareRoundTripMs(server: BenchServer, steps: number): Promise<number> {
  const { body } = await server.call<{ wallMs: number }>(`BareSteps/${nextKey('bare')}/run`, { steps })
  return body.wallMs / steps
}

/**
 * The SQLite commit floor: a bare `BEGIN IMMEDIATE; INSERT; COMMIT` loop on a WAL file with `synchronous=FULL`, in
 * the same folder kind as the runtimes' files. `commits(count)` returns each commit's latency in ms.
 */
export function commitProbe(): { commits(count: number): number[]; close(): void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'zidane-bench-commit-'))
  const db = new DatabaseSync(path.join(folder, 'commit.db'))
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec('CREATE TABLE rows (value TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO rows (value) VALUES (?)')
  const payload = 'x'.repeat(300)
  return {
    commits(count) {
      const latencies: number[] = []
      for (let index = 0; index < count; index++) {
        const started = performance.now()
        db.exec('BEGIN IMMEDIATE')
        insert.run(payload)
        db.exec('COMMIT')
        latencies.push(performance.now() - started)
      }
      return latencies
    },
    close() { db.close(); rmSync(folder, { recursive: true, force: true }) },
  }
}
