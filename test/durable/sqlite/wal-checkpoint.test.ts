import { statSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import type { SqliteRuntime } from 'zidane/durable/sqlite'
import { useTempFiles } from './sqlite-test-helpers'

/** A WAL frame: a 24-byte header and a 4 KiB page. */
const FRAME_BYTES = 24 + 4096

/** Records `count` model steps of run `runId` (one synced commit each, a few pages each). */
async function recordSteps(runtime: SqliteRuntime, runId: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) await runtime.step(stepKey(runId, 'model', `t${index}`), async () => ({ text: 'x'.repeat(200), index }))
}

describe('SQLite runtime: WAL checkpoints', () => {
  const files = useTempFiles()
  const walFrames = (): number => statSync(`${files.dbPath()}-wal`).size / FRAME_BYTES

  it('checkpoints on the heartbeat after commits, so the next commits reuse the WAL from its start', async () => {
    const runtime = files.open({ heartbeatMs: 20 })
    await runtime.runs.claim('s1', 'run_a')
    await recordSteps(runtime, 'run_a', 60)
    const afterFirst = walFrames()
    await delay(120)
    await recordSteps(runtime, 'run_b', 60)
    // Without the checkpoint the second batch would append behind the first (SQLite checkpoints at 1000 pages only),
    // and a commit that grows the WAL file costs more to sync than one that overwrites it.
    expect(walFrames()).toBeLessThan(afterFirst * 1.5)
  })
})
