import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ensureIdentityKeys } from '../../../scripts/stack/identity-keys'
import { isMultiTenant, servicesEnvironment } from '../../../scripts/stack/process-env'
import { loadStackConfig } from '../../../scripts/stack/stack-config'

const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o777

describe('secrets of the local stack', () => {
  let dataDir = ''
  beforeEach(async () => { dataDir = await mkdtemp(join(tmpdir(), 'zidane-secrets-')) })
  afterEach(async () => { await rm(dataDir, { recursive: true, force: true }) })

  it('keeps the API key, the answer secret and the identity key readable by their owner only, also files written before', async () => {
    await writeFile(join(dataDir, 'answer-secret'), 'an-older-secret-of-enough-length\n', { mode: 0o644 })
    await loadStackConfig({ ZIDANE_DATA_DIR: dataDir })
    const keys = await ensureIdentityKeys(join(dataDir, 'keys'))
    for (const file of [join(dataDir, 'answer-secret'), join(dataDir, 'gateway-api-key'), keys.privateKeyPath]) expect(await modeOf(file)).toBe(0o600)
  })

  it('gives the services only their own variables and those listed for tools: no gateway secret', () => {
    const env = servicesEnvironment({ PATH: '/bin', GATEWAY_API_KEYS: 'a,b', GATEWAY_ANSWER_SECRET: 's', ANTHROPIC_API_KEY: 'k', ZIDANE_TOOL_ENV: 'PIP_INDEX_URL', PIP_INDEX_URL: 'u', AWS_SECRET_ACCESS_KEY: 'x', ZIDANE_MAX_TURNS: '3' })
    expect(env).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'k', ZIDANE_TOOL_ENV: 'PIP_INDEX_URL', PIP_INDEX_URL: 'u', ZIDANE_MAX_TURNS: '3' })
  })

  it('counts tenants by API keys', () => {
    expect(isMultiTenant('one')).toBe(false)
    expect(isMultiTenant('one, two')).toBe(true)
  })
})
