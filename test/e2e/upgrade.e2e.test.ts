import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { acceptsConnections } from '../../scripts/stack/check-ports'
import { freePort } from '../../scripts/stack/free-port'
import { ensureIdentityKeys } from '../../scripts/stack/identity-keys'
import { servicesEnvironment } from '../../scripts/stack/process-env'
import { supervise } from '../../scripts/stack/supervisor'
import type { ProcessHandle } from '../../scripts/stack/supervisor'
import { waitUntil } from '../../scripts/stack/wait'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface View { status: string; pending: Array<{ id: string }>; runs: Array<{ text?: string }> }
interface Deployment { id: string; uri: string; services: Array<{ name: string }> }

/** The step the next release journals first in every session run: the only difference between the two releases. */
const RELEASE_STEP = 'release-v2-first-step'
/** Both releases: a waiting run suspends within a second (as it would after a minute in production). */
const SERVICES_SETTINGS = { ZIDANE_INACTIVITY_TIMEOUT_MS: '1000', ZIDANE_SANDBOX: 'off' }

/** Polls `probe` (every 50 ms) until it yields a value; the harness's poller with this file's timeout. */
function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 40_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the upgrade condition')
}

/**
 * Rolling a release the way Restate prescribes (immutable deployments): the next release runs beside the current one
 * at its own address and is registered as a new deployment; invocations that started on the current one finish there;
 * it is removed once Restate reports none pinned to it.
 */
describe('a release rolled as a new deployment', () => {
  let stack: TestStack | undefined
  let next: ProcessHandle | undefined
  const nextOutput: string[] = []
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  afterEach(context => { if (context.task.result?.state === 'fail') console.error(`---- next release output ----\n${nextOutput.join('\n')}`) })
  beforeAll(async () => { stack = await startTestStack(SERVICES_SETTINGS, { tenants: 1 }) }, 120_000)
  afterAll(async () => {
    await next?.stop()
    await stack?.destroy()
  })

  const admin = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${s().adminUrl}${path}`, { ...init, headers: { 'content-type': 'application/json', accept: 'application/json' } })
  const query = async <T>(sql: string): Promise<T[]> => ((await (await admin('/query', { method: 'POST', body: JSON.stringify({ query: sql }) })).json()) as { rows: T[] }).rows
  const deployments = async (): Promise<Deployment[]> => ((await (await admin('/deployments')).json()) as { deployments: Deployment[] }).deployments
  const view = async (sessionId: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as View) : undefined
  }
  const statusIs = (sessionId: string, status: string): Promise<View> => waitFor(async () => { const seen = await view(sessionId); return seen?.status === status ? seen : undefined })
  const prompt = async (sessionId: string, text: string): Promise<string> => {
    const response = await s().request(`/v1/sessions/${sessionId}/prompts`, { method: 'POST', body: JSON.stringify({ prompt: text }) })
    expect(response.status).toBe(202)
    return ((await response.json()) as { invocationId: string }).invocationId
  }
  const pinnedTo = async (invocationId: string): Promise<string | undefined> => (await query<{ pinned_deployment_id?: string }>(`SELECT pinned_deployment_id FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.pinned_deployment_id
  const stepsOf = async (invocationId: string): Promise<string[]> => (await query<{ name?: string }>(`SELECT name FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)).flatMap(entry => (entry.name ? [entry.name] : []))
  /** What `restate deployments list --extra` counts as a deployment's active invocations: those pinned to it, not completed. */
  const activeOn = async (deploymentId: string): Promise<number> => (await query<{ n: number }>(`SELECT COUNT(1) AS n FROM sys_invocation_status WHERE pinned_deployment_id = '${deploymentId}' AND status != 'completed'`))[0]?.n ?? -1

  /** Starts the next release (test/e2e/fixtures/services-v2.ts) beside the current one, with its settings, at its own port. */
  async function startNextRelease(): Promise<string> {
    const port = await freePort()
    const root = process.cwd()
    const { publicKeyId } = await ensureIdentityKeys(join(s().dataDir, 'keys'))
    next = supervise({
      name: 'services-v2',
      command: process.execPath,
      args: ['--import', pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href, join(root, 'test', 'e2e', 'fixtures', 'services-v2.ts')],
      ready: () => acceptsConnections(port),
      log: (name, line) => { nextOutput.push(`[${name}] ${line}`) },
      env: servicesEnvironment({
        ...process.env,
        ...SERVICES_SETTINGS,
        SERVICES_HOST: '127.0.0.1',
        SERVICES_PORT: String(port),
        RESTATE_IDENTITY_KEYS: publicKeyId,
        RESTATE_INGRESS_URL: s().ingressUrl,
        ZIDANE_WORKSPACE_ROOT: join(s().dataDir, 'workspaces'),
        // Its own record of running commands: at start a services process stops the commands recorded there.
        ZIDANE_COMMANDS_DIR: join(s().dataDir, 'v2-running-commands'),
        ZIDANE_MAX_ATTEMPTS: '120',
        ZIDANE_TEST_RELEASE_STEP: RELEASE_STEP,
      }),
    }, reason => { nextOutput.push(`fatal: ${reason}`) })
    await waitUntil(() => acceptsConnections(port), 60_000, 'the next release to listen')
    return `http://127.0.0.1:${port}`
  }

  it('a run waiting on a question finishes on its release; new runs take the next; the old one is removed once drained', async () => {
    const current = (await deployments()).find(deployment => deployment.uri === `${s().servicesUrl}/`)
    if (!current) throw new Error(`no deployment at ${s().servicesUrl}`)

    const waiting = await prompt('before-upgrade', 'ask: which release answers?')
    // Waiting on its question, suspended in Restate (the gateway reports the session's own record: read the table here).
    const suspended = await waitFor(async () => { const seen = await view('before-upgrade'); return seen?.pending[0] ? seen : undefined })
    await waitFor(async () => ((await query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${waiting}'`))[0]?.status === 'suspended' ? true : undefined))
    const question = suspended.pending[0]
    if (!question) throw new Error('no pending question')
    expect(await pinnedTo(waiting)).toBe(current.id)
    expect(await activeOn(current.id)).toBeGreaterThan(0)

    // The next release at a new address, registered as a new deployment (no force: nothing is overwritten).
    const nextUrl = await startNextRelease()
    const registered = await admin('/deployments', { method: 'POST', body: JSON.stringify({ uri: nextUrl, force: false }) })
    expect(registered.status).toBe(201)
    const { id: nextId, services: nextServices } = (await registered.json()) as Deployment
    expect(nextId).not.toBe(current.id)
    // Else the old deployment would keep the latest revision of a service, and removing it would take that service away.
    expect(nextServices.map(service => service.name).sort(), 'the fixture serves what services/endpoint.ts serves').toEqual(current.services.map(service => service.name).sort())
    expect(((await (await admin('/services/session')).json()) as { deployment_id: string }).deployment_id).toBe(nextId)

    // The answer reaches the run on the release it started on: it replays there and completes.
    const answered = await s().request(`/v1/awakeables/${encodeURIComponent(question.id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'the first' }) })
    expect(answered.status).toBe(200)
    expect((await statusIs('before-upgrade', 'completed')).runs.at(-1)?.text).toBe('You said: the first')
    expect(await pinnedTo(waiting)).toBe(current.id)
    expect(await stepsOf(waiting)).not.toContain(RELEASE_STEP)

    // A new prompt runs on the next release: its journal has the step the old one lacks.
    const fresh = await prompt('after-upgrade', 'hello from the next release')
    expect((await statusIs('after-upgrade', 'completed')).runs.at(-1)?.text).toBe('Echo: hello from the next release')
    expect(await pinnedTo(fresh)).toBe(nextId)
    expect(await stepsOf(fresh)).toContain(RELEASE_STEP)

    // Drained: no invocation pinned to the old deployment is unfinished; then it is removed and its process stopped.
    await waitFor(async () => ((await activeOn(current.id)) === 0 ? true : undefined))
    expect((await admin(`/deployments/${current.id}?force=true`, { method: 'DELETE' })).status).toBe(202)
    await waitFor(async () => ((await deployments()).every(deployment => deployment.id !== current.id) ? true : undefined))
    await s().services().stop()

    // The stack goes on without it, and nothing failed along the way.
    await prompt('after-removal', 'ask: still answering?')
    const asked = await waitFor(async () => (await view('after-removal'))?.pending[0])
    expect((await s().request(`/v1/awakeables/${encodeURIComponent(asked.id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'yes' }) })).status).toBe(200)
    expect((await statusIs('after-removal', 'completed')).runs.at(-1)?.text).toBe('You said: yes')
    const failures = await query<{ id: string; target: string; last_failure?: string; completion_failure?: string }>("SELECT id, target, last_failure, completion_failure FROM sys_invocation WHERE last_failure IS NOT NULL OR completion_failure IS NOT NULL")
    expect(failures).toEqual([])
  })
})
