import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantOf } from '../../ingress-gateway/tenancy'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const SERVICE_SECRET = 'zsecret-only-the-services-may-see-this'

describe('two tenants on one stack, shell in the sandbox', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const dataDir = (): string => s().dataDir
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ ZIDANE_TEST_SERVICE_SECRET: SERVICE_SECRET }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  /** Runs `command` in a fresh session of tenant B and returns the run's final text (the tool results). */
  const shellOfB = async (session: string, command: string): Promise<string> => {
    const response = await s().request(`/v1/sessions/${session}/prompts?wait=true`, { method: 'POST', key: s().apiKeys[1], body: JSON.stringify({ prompt: `shell: ${command}` }) })
    expect(response.status).toBe(200)
    return ((await response.json()) as { text: string }).text
  }

  it('says at start-up and in /readyz that shell runs sandboxed', async () => {
    expect(s().shell.mode).toBe('sandboxed')
    expect(await (await s().request('/readyz', { key: null })).json()).toMatchObject({ status: 'ready', shell: { mode: 'sandboxed' } })
  })

  it("keeps B's shell away from A's files, the data folder, the services' environment and every port of the stack", async () => {
    const write = await s().request('/v1/sessions/iso-a/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'write: secret.txt tenant-a-private-content' }) })
    expect(write.status).toBe(200)
    const asked = await s().request('/v1/sessions/iso-a-ask/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'ask: tenant A question?' }) })
    expect(asked.status).toBe(202)
    const deployments = await (await fetch(`${s().adminUrl}/deployments`)).text()
    const servicesPort = /127\.0\.0\.1:(\d+)/.exec(deployments)?.[1]
    const ports = [new URL(s().ingressUrl).port, new URL(s().adminUrl).port, servicesPort, new URL(s().gatewayUrl).port]
    expect(ports.every(port => port !== undefined && port !== '')).toBe(true)
    const workspaceOfA = join(dataDir(), 'workspaces', tenantOf(s().apiKeys[0]), 'iso-a')
    expect(await readFile(join(workspaceOfA, 'secret.txt'), 'utf8')).toBe('tenant-a-private-content')
    const servicesPid = s().services().current()?.pid
    const probes: Array<[string, string]> = [
      ['iso-b-read-a', `cat ${join(workspaceOfA, 'secret.txt')} && echo LEAKED`],
      ['iso-b-data', `ls ${dataDir()} && cat ${dataDir()}/answer-secret ${dataDir()}/keys/* && echo LEAKED`],
      ['iso-b-environ', `cat /proc/${servicesPid}/environ && echo LEAKED`],
      ['iso-b-env', 'env'],
      ...ports.map((port, index): [string, string] => [`iso-b-port-${index}`, `exec 3<>/dev/tcp/127.0.0.1/${port} && echo LEAKED`]),
    ]
    const texts = await Promise.all(probes.map(([session, command]) => shellOfB(session, command)))
    const answerSecret = (await readFile(join(dataDir(), 'answer-secret'), 'utf8')).trim()
    for (const text of texts) {
      expect(text).not.toContain('LEAKED')
      for (const secret of [...s().apiKeys, answerSecret, SERVICE_SECRET, 'tenant-a-private-content', 'PRIVATE KEY', 'GATEWAY_', 'ANTHROPIC_API_KEY', 'RESTATE_IDENTITY']) expect(text).not.toContain(secret)
    }
    expect(texts[3]).toContain('HOME=')
    expect(await readFile(join(workspaceOfA, 'secret.txt'), 'utf8')).toBe('tenant-a-private-content')
    const question = (await (await s().request('/v1/sessions/iso-a-ask')).json()) as { pending: Array<{ question: string }> }
    expect(question.pending.map(pending => pending.question)).toEqual(['tenant A question?'])
  }, 60_000)
})
