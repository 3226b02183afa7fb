import { readdirSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import type { SqliteRuntime } from 'zidane/durable/sqlite'
import { useTempFiles } from './sqlite-test-helpers'

/**
 * What an OS crash (power loss) leaves of a process that was killed with it: the synced WAL (the runtime's
 * `abandon` drops the unsynced buffer), no start log (its lines are never synced), and an owner whose last heartbeat
 * is older than the machine's boot.
 */
function simulateOsCrash(runtime: SqliteRuntime): void {
  runtime.abandon()
  const folder = dirname(runtime.path)
  for (const file of readdirSync(folder)) if (file.startsWith(`${basename(runtime.path)}-starts-`)) rmSync(join(folder, file))
  const db = new DatabaseSync(runtime.path)
  db.prepare('UPDATE owners SET heartbeat_at = 0 WHERE owner_id = ?').run(runtime.owner)
  db.close()
}

const model = (turn: number) => stepKey('run_a', 'model', `t${turn}`)
const tool = (turn: number, call: string) => stepKey('run_a', 'tool', `t${turn}`, call)

describe('SQLite runtime after an OS crash: the last synced commit marks the calls after it as possibly started', () => {
  const files = useTempFiles()

  /** A first process: the model step of turn 1 committed, its unsafe call ran, and the OS crashed before the next commit. */
  const crashAfterUnsafeCall = async (): Promise<void> => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await first.step(model(1), async () => 'call charge')
    await first.step(tool(1, 'charge'), async () => 'charged', { atMostOnce: true })
    simulateOsCrash(first)
  }

  it('reports the unsafe call resumed though its marker was lost; a safe call and calls after the next commit run fresh', async () => {
    await crashAfterUnsafeCall()
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    expect(await second.step(model(1), async () => 'asked again')).toBe('call charge')
    const attempts: boolean[] = []
    await second.step(tool(1, 'charge'), async attempt => { attempts.push(attempt.resumed); return 'interrupted' }, { atMostOnce: true })
    await second.step(tool(1, 'lookup'), async attempt => { attempts.push(attempt.resumed); return 'record' })
    await second.step(model(2), async () => 'call charge again')
    await second.step(tool(2, 'charge'), async attempt => { attempts.push(attempt.resumed); return 'charged' }, { atMostOnce: true })
    expect(attempts).toEqual([true, false, false])
  })

  it('keeps the window open across a second crash that came before the recovering process committed a step', async () => {
    await crashAfterUnsafeCall()
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    second.abandon()
    const third = files.open()
    await third.runs.claim('s1', 'run_a')
    expect(await third.step(tool(1, 'charge'), async attempt => attempt.resumed, { atMostOnce: true })).toBe(true)
  })

  it('after a process crash on a running machine, the start log decides: the call it never started is fresh', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await first.step(model(1), async () => 'call charge')
    first.abandon()
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    expect(await second.step(tool(1, 'charge'), async attempt => attempt.resumed, { atMostOnce: true })).toBe(false)
  })
})
