import http2 from 'node:http2'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as restate from '@restatedev/restate-sdk'
import { afterAll, describe, expect, it } from 'vitest'
import { ensureIdentityKeys } from '../../scripts/stack/identity-keys'
import { freePort, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'

const greeter = restate.service({ name: 'greeter', handlers: { greet: async (_ctx: restate.Context, name: string) => `hi ${name}` } })

function unsignedCall(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`http://127.0.0.1:${port}`)
    client.on('error', reject)
    const request = client.request({ ':method': 'POST', ':path': '/invoke/greeter/greet', 'content-type': 'application/vnd.restate.invocation.v6' })
    request.on('response', headers => { resolve(Number(headers[':status'])); client.close() })
    request.on('error', reject)
    request.end()
  })
}

describe.each(REPLAY_MODES)('request identity, as npm start sets it up ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  afterAll(async () => { await harness?.stop() })

  it('derives the key id the server loads, and the endpoint accepts only signed requests', async () => {
    const keys = await ensureIdentityKeys(await mkdtemp(join(tmpdir(), 'zidane-keys-')))
    harness = await startRestateHarness({ alwaysReplay, env: { RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: keys.privateKeyPath } })
    expect(harness.logs()).toContain(keys.publicKeyId)
    const port = await freePort()
    await restate.serve({ services: [greeter], port, identityKeys: [keys.publicKeyId] })
    await harness.registerDeployment(`http://127.0.0.1:${port}`)
    const signed = await harness.call<string>('greeter/greet', 'Ada')
    expect(signed.body).toBe('hi Ada')
    expect(await unsignedCall(port)).toBe(401)
  })
})
