import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { setTimeout as delay } from 'node:timers/promises'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { createDefaultRuntime } from 'zidane/durable'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import type { SqliteRuntime } from 'zidane/durable/sqlite'
import { EVENTS_SERVICE } from '../../contract/event-log'
import type { ReadEventsResult } from '../../contract/event-log'
import type { BenchServer } from './restate-server'
import type { BenchRunRequest, BenchRunResult } from './restate-services'
import type { ScriptedRunShape } from './scripted-run'
import { timeScriptedRun } from './scripted-run'

/**
 * One way of running the scripted run; `runOnce` resolves with the wall time and model turns of one run (and, for a
 * Restate variant with `timeSteps`, the time it waited on its step round trips and how many it made).
 */
export interface Variant {
  name: string
  runOnce(shape: ScriptedRunShape): Promise<{ wallMs: number; turns: number; invocationId?: string; events?: number; stepWaitMs?: number; steps?: number }>
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

/**
 * A Restate object of the bench services, one fresh key per run; the wall time is measured inside the handler. With
 * `eventLog`, each run waits until its events reached the log (so its syncs or appends do not run into the next
 * variant's time) and reports how many events the log holds.
 */
export function restateVariant(name: string, server: BenchServer, objectName: string, switches: Pick<BenchRunRequest, 'coalesce' | 'memorySession' | 'eventLog' | 'withoutIntents' | 'withoutDoorbell' | 'sessionWrites' | 'timeSteps' | 'replaySafe'> = {}): Variant {
  return {
    name,
    async runOnce(shape) {
      const request: BenchRunRequest = { ...shape, ...switches }
      const key = nextKey(objectName)
      const { body } = await server.call<BenchRunResult>(`${objectName}/${key}/run`, request)
      return body.sessionEvents === undefined ? body : { ...body, events: await awaitEventLog(server, key, body.sessionEvents) }
    },
  }
}

const EVENT_LOG_WAIT_MS = 10_000

/**
 * Polls `events/<key>/read` until the log holds the `expected` events the run recorded. One-way calls land after the
 * run answered, and not in order with a later ingress call, so only the count tells they all did.
 */
async function awaitEventLog(server: BenchServer, key: string, expected: number): Promise<number> {
  const deadline = performance.now() + EVENT_LOG_WAIT_MS
  for (;;) {
    const { body } = await server.call<ReadEventsResult>(`${EVENTS_SERVICE}/${key}/read`, { after: 0, limit: 1 })
    if (body.count >= expected) return body.count
    if (performance.now() > deadline) throw new Error(`events/${key} holds ${body.count} events after ${EVENT_LOG_WAIT_MS} ms, the run recorded ${expected}`)
    await delay(2)
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
