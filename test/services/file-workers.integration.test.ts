import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunResult } from '../../contract/session'
import { groupHasProcesses } from '../../src/tools/builtin/run-command'
import { printLogsOnFailure, startRestateHarness } from '../helpers/restate/restate-harness'
import { loadSessionServices } from '../helpers/restate/session-services'
import type { RestateHarness } from '../helpers/restate/restate-harness'

const IDLE_MS = 3000

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await sleep(25)
  return condition()
}

describe('the file tools\' workers of the services (real Restate server)', () => {
  let harness: RestateHarness | undefined
  let workspaces = ''
  const started: Array<number | undefined> = []
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    workspaces = await mkdtemp(path.join(os.tmpdir(), 'zidane-file-workers-'))
    const services = loadSessionServices({ ZIDANE_WORKSPACE_ROOT: workspaces }, { fileWorkers: { idleMs: IDLE_MS, onWorkerStart: group => started.push(group) } })
    harness = await startRestateHarness({ services })
  })
  afterAll(async () => {
    await harness?.stop()
    await rm(workspaces, { recursive: true, force: true })
  })
  printLogsOnFailure(() => harness)

  const write = async (sessionKey: string, file: string): Promise<void> => {
    const result = await h().call<SessionRunResult>(`session/${sessionKey}/run`, { prompt: `write: ${file} from ${sessionKey}\nwrite: ${file}.2 again` })
    expect(result.body.status).toBe('completed')
  }

  it('serves two runs of a session from one worker process', async () => {
    await write('acme~one', 'a.txt')
    expect(started).toHaveLength(1)
    await write('acme~one', 'b.txt')
    expect(started).toHaveLength(1)
    expect(groupHasProcesses(started[0])).toBe(true)
    expect(await readFile(path.join(workspaces, 'acme', 'one', 'a.txt'), 'utf8')).toBe('from acme~one')
    expect(await readFile(path.join(workspaces, 'acme', 'one', 'b.txt'), 'utf8')).toBe('from acme~one')
  }, 60_000)

  it('serves another session of the tenant from the same warm worker, starts one for another tenant, and ends each once idle past its time', async () => {
    await write('acme~two', 'a.txt')
    expect(started).toHaveLength(1)
    await write('globex~one', 'a.txt')
    expect(started).toHaveLength(2)
    expect(new Set(started).size).toBe(2)
    expect(await readFile(path.join(workspaces, 'acme', 'two', 'a.txt'), 'utf8')).toBe('from acme~two')
    expect(await readFile(path.join(workspaces, 'globex', 'one', 'a.txt'), 'utf8')).toBe('from globex~one')
    expect(await until(() => !started.some(groupHasProcesses), IDLE_MS + 5000)).toBe(true)
  }, 60_000)
})
