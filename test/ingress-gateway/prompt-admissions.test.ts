import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { PromptAdmission, PromptAdmissionBatch, PromptAdmissionRequest } from '../../contract/admission'
import { BATCH_WAIT_MS, PromptAdmissions } from '../../ingress-gateway/prompt-admissions'
import { connectIngress } from '../../ingress-gateway/restate-ingress'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'

const request = (sessionKey: string): PromptAdmissionRequest => ({ sessionKey, run: { prompt: 'p' }, maxRuns: 10 })
const admitted = (invocationId: string): PromptAdmission => ({ outcome: 'admitted', invocationId, queued: false })
const bounded = { kind: 'bounded', waitMs: 5_000 } as const

describe('the gateway\'s prompt admissions', () => {
  let restate: FakeRestate
  let admissions: PromptAdmissions
  /** Releases the `admit` calls the fake holds. */
  let release: () => void = () => undefined
  beforeAll(async () => { restate = await startFakeRestate() })
  afterAll(async () => { await restate.close() })
  beforeEach(() => {
    restate.requests.length = 0
    admissions = new PromptAdmissions(connectIngress(restate.url))
    const held = new Promise<void>(resolve => { release = resolve })
    restate.on('POST /admission/t1/admit', async call => {
      await held
      return { status: 200, body: admitted(`inv_${(call.body as PromptAdmissionRequest).sessionKey}`) }
    })
    restate.on('POST /admission/t1/admitMany', call => ({ status: 200, body: (call.body as PromptAdmissionBatch).requests.map(one => admitted(`inv_${one.sessionKey}`)) }))
    restate.on('POST /admission/t2/admit', call => ({ status: 200, body: admitted(`inv_${(call.body as PromptAdmissionRequest).sessionKey}`) }))
  })
  const paths = (): string[] => restate.requests.map(call => call.path)

  it('admit an idle tenant\'s prompt at once, and the prompts that arrive while it is under way together, in order', async () => {
    const first = admissions.admit('t1', request('t1~a'), bounded)
    await expect.poll(paths).toEqual(['/admission/t1/admit'])
    const later = ['t1~b', 't1~c', 't1~d'].map(key => admissions.admit('t1', request(key), bounded))
    // Another tenant does not wait for this one.
    expect(await admissions.admit('t2', request('t2~x'), bounded)).toEqual(admitted('inv_t2~x'))
    release()
    expect(await first).toEqual(admitted('inv_t1~a'))
    expect(await Promise.all(later)).toEqual([admitted('inv_t1~b'), admitted('inv_t1~c'), admitted('inv_t1~d')])
    const batch = restate.requests.find(call => call.path.endsWith('/admitMany'))
    expect((batch?.body as PromptAdmissionBatch).requests.map(one => one.sessionKey)).toEqual(['t1~b', 't1~c', 't1~d'])
    expect(paths().filter(path => path.startsWith('/admission/t1/'))).toEqual(['/admission/t1/admit', '/admission/t1/admitMany'])
  })

  it('send a prompt on its own once the call ahead of it is slower than the batch wait: none waits in the gateway long', async () => {
    const first = admissions.admit('t1', request('t1~a'), bounded)
    await expect.poll(paths).toEqual(['/admission/t1/admit'])
    const started = performance.now()
    const second = admissions.admit('t1', request('t1~b'), bounded)
    await expect.poll(paths, { timeout: 5 * BATCH_WAIT_MS }).toEqual(['/admission/t1/admit', '/admission/t1/admit'])
    expect(performance.now() - started).toBeGreaterThanOrEqual(BATCH_WAIT_MS - 20)
    release()
    expect(await Promise.all([first, second])).toEqual([admitted('inv_t1~a'), admitted('inv_t1~b')])
  })

  it('send a batch whose clients all left while it waited in the gateway: a prompt handed to the gateway reaches Restate', async () => {
    const first = admissions.admit('t1', request('t1~a'), bounded)
    await expect.poll(paths).toEqual(['/admission/t1/admit'])
    const left = new AbortController()
    const held = { kind: 'held', signal: left.signal, renewMs: 60_000 } as const
    const waiting = [admissions.admit('t1', request('t1~b'), held), admissions.admit('t1', request('t1~c'), held)]
    for (const prompt of waiting) prompt.catch(() => undefined)
    left.abort()
    release()
    expect(await first).toEqual(admitted('inv_t1~a'))
    await expect.poll(() => restate.requests.filter(call => call.path.endsWith('/admitMany')).map(call => (call.body as PromptAdmissionBatch).requests.map(one => one.sessionKey))).toEqual([['t1~b', 't1~c']])
  })

  it('send a lone prompt whose client left while it waited in the gateway, as a batch of them is', async () => {
    const first = admissions.admit('t1', request('t1~a'), bounded)
    await expect.poll(paths).toEqual(['/admission/t1/admit'])
    const left = new AbortController()
    const waiting = admissions.admit('t1', request('t1~b'), { kind: 'held', signal: left.signal, renewMs: 60_000 })
    waiting.catch(() => undefined)
    left.abort()
    release()
    expect(await first).toEqual(admitted('inv_t1~a'))
    await expect.poll(() => restate.requests.map(call => (call.body as PromptAdmissionRequest).sessionKey)).toEqual(['t1~a', 't1~b'])
  })

  it('answer a bounded prompt of an unanswered batch with nothing when its wait runs out (Restate keeps the call)', async () => {
    restate.on('POST /admission/t1/admitMany', async () => new Promise(() => undefined))
    const first = admissions.admit('t1', request('t1~a'), bounded)
    await expect.poll(paths).toEqual(['/admission/t1/admit'])
    const waiting = [admissions.admit('t1', request('t1~b'), { kind: 'bounded', waitMs: 400 }), admissions.admit('t1', request('t1~c'), { kind: 'bounded', waitMs: 400 })]
    await expect.poll(paths, { timeout: 2_000 }).toContain('/admission/t1/admitMany')
    expect(await Promise.all(waiting)).toEqual([undefined, undefined])
    release()
    expect(await first).toEqual(admitted('inv_t1~a'))
  })
})
