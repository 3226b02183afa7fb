import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { registerDeployment } from '../../scripts/stack/register-deployment'
import { waitFor } from '../helpers/restate/restate-harness'
import { startLossyProxy } from '../helpers/lossy-proxy'
import type { LossyProxy } from '../helpers/lossy-proxy'
import { printStackOutputOnFailure, shareWithServices, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface View { status: string; turns: Array<{ content: Array<{ type: string; content?: unknown }> }> }

/** How late the services' bytes reach Restate: far longer than a command takes to start and the test to kill. */
const NETWORK_DELAY_MS = 600

/** Resolves once `file` exists, checked every 2 ms (the kill must land while the run command is still on its way). */
async function appeared(file: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 2))
  }
}

describe('an unsafe call killed as it starts, over a slow network that loses what is in flight', () => {
  let stack: TestStack | undefined
  let proxy: LossyProxy | undefined
  let folder = ''
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'zidane-once-'))
    await shareWithServices(folder)
    // One tenant and no sandbox: the command writes its ledger in this test's folder.
    stack = await startTestStack({ ZIDANE_SANDBOX: 'off' }, { tenants: 1 })
    proxy = await startLossyProxy(Number(new URL(stack.servicesUrl).port), NETWORK_DELAY_MS)
    // New invocations go to the newest deployment: Restate now reaches the services only through the proxy.
    await registerDeployment(stack.adminUrl, proxy.url)
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await proxy?.close()
    await rm(folder, { recursive: true, force: true })
  })

  it('runs once: the retry reports it interrupted instead of running it again as new', async () => {
    const ledger = join(folder, 'ledger')
    const services = s().services()
    const response = await s().request('/v1/sessions/once/prompts', { method: 'POST', body: JSON.stringify({ prompt: `shell: echo ran >> ${ledger}; sleep 30` }) })
    expect(response.status).toBe(202)
    await appeared(ledger, 60_000)
    // The command has started; its run command may still be inside the proxy. The process dies, the proxy drops it.
    services.current()?.kill('SIGKILL')
    const view = await waitFor(async () => {
      const session = await s().request('/v1/sessions/once')
      if (session.status !== 200) return undefined
      const body = (await session.json()) as View
      return body.status === 'completed' ? body : undefined
    }, 90_000, 'the run to complete after the restart')
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toEqual(['ran'])
    const results = view.turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result').map(block => block.content))
    expect(results).toEqual([INTERRUPTED_TOOL_TEXT])
    // The crash guard's count of the call (services/composition.ts: the workspace root's `.step-crashes`) is forgotten
    // once its result is journaled.
    await expect.poll(() => readdirSync(join(s().dataDir, 'workspaces', '.step-crashes')), { timeout: 10_000 }).toEqual([])
  })
})
