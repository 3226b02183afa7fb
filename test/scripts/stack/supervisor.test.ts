import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { supervise } from '../../../scripts/stack/supervisor'
import type { ProcessHandle } from '../../../scripts/stack/supervisor'

const handles: ProcessHandle[] = []
afterEach(async () => { for (const handle of handles.splice(0)) await handle.stop() })

/** A supervised Node process that idles until it is killed. */
function idler(): ProcessHandle {
  const handle = supervise({ name: 'idler', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: process.env, log: () => undefined }, () => undefined)
  handles.push(handle)
  return handle
}

async function killAndWait(handle: ProcessHandle): Promise<number | undefined> {
  const child = handle.current()
  const exited = once(child!, 'exit')
  child?.kill('SIGKILL')
  await exited
  return child?.pid
}

describe('supervisor: resume after a planned kill', () => {
  it('starts the killed process at once instead of after its automatic restart delay', async () => {
    const handle = idler()
    const killed = await killAndWait(handle)
    expect(handle.current()?.pid).toBe(killed) // the automatic restart still waits its 100 ms
    handle.resume()
    expect(handle.current()?.pid).not.toBe(killed)
    expect(handle.current()?.exitCode).toBeNull()
  })

  it('leaves a process that already runs again alone: never two copies', async () => {
    const handle = idler()
    await killAndWait(handle)
    await new Promise(resolve => setTimeout(resolve, 300)) // the automatic restart ran
    const restarted = handle.current()
    expect(restarted?.exitCode).toBeNull()
    handle.resume()
    expect(handle.current()).toBe(restarted)
  })
})
