import { describe, expect, it } from 'vitest'
import { assertOutsideStep, runInStep } from '../../src/restate/step-scope'

const tick = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

describe('step scope', () => {
  it('still guards a closure that outlives another one that ended before it', async () => {
    let releaseLong = (): void => undefined
    const long = runInStep('long', async () => {
      await new Promise<void>(resolve => { releaseLong = resolve })
      await tick()
      expect(() => assertOutsideStep('ctx.get()')).toThrow(/inside the closure of step "long"/)
    })
    await runInStep('short', async () => { await tick() })
    releaseLong()
    await long
  })

  it('guards a closure started after every earlier one has ended', async () => {
    await runInStep('first', async () => { await tick() })
    await runInStep('second', async () => {
      await tick()
      expect(() => assertOutsideStep('ctx.set()')).toThrow(/inside the closure of step "second"/)
    })
  })

  it('leaves code outside every closure unguarded, also while a closure of the same process runs', async () => {
    let release = (): void => undefined
    const pending = runInStep('pending', async () => { await new Promise<void>(resolve => { release = resolve }) })
    // Another chain (the handler of another invocation, the loop between its steps) reaches the context meanwhile.
    try {
      await (async () => {
        await tick()
            expect(() => assertOutsideStep('ctx.set()')).not.toThrow()
      })()
    } finally {
      release()
      await pending
    }
  })
})
