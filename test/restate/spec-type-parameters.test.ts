import type * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { describe, expect, it } from 'vitest'
import { awakeableWithTimeout, raceWithTimeout } from 'zidane/restate'
import type { AwakeableToolCombinators, AwakeableWithTimeoutOptions, RestatePromiseRaceLike } from 'zidane/restate'
import { createFakeObjectContext } from '../helpers/restate/fake-context'

// The documented forms of the specification (zidane/restate reference): `npm run typecheck` compiles this file, so a
// missing `TPromise` parameter (TS2558 / TS2315) or a missing `any?` fails the build. Never called: it needs a real
// Restate context.
export function documentedForms(ctx: restate.ObjectContext): void {
  const options: AwakeableWithTimeoutOptions<RestatePromise<unknown>> = { timeoutMs: 1_000, promises: RestatePromise }
  const racer: RestatePromiseRaceLike<RestatePromise<unknown>> = RestatePromise
  const awakeable = awakeableWithTimeout<string, RestatePromise<unknown>>(ctx, options)
  void raceWithTimeout<string, RestatePromise<unknown>>(ctx, awakeable.promise.then(outcome => String(outcome.timedOut)), { timeoutMs: 1_000, promises: racer })
  const combinators: AwakeableToolCombinators = RestatePromise
  void combinators.any?.([])
}

describe('the TPromise type parameter and AwakeableToolCombinators.any', () => {
  it('races through the given combinator typed with its own promise type', async () => {
    const ctx = createFakeObjectContext()
    const raced: Array<readonly Promise<unknown>[]> = []
    const racer: RestatePromiseRaceLike<Promise<unknown>> = { race: values => { raced.push(values); return Promise.race(values) } }
    const { promise } = awakeableWithTimeout<string, Promise<unknown>>(ctx, { timeoutMs: 50, promises: racer })
    await expect(promise).resolves.toEqual({ timedOut: true })
    expect(raced).toHaveLength(1)
    const answered = raceWithTimeout<string, Promise<unknown>>(ctx, Promise.resolve('blue'), { promises: racer })
    await expect(answered).resolves.toEqual({ timedOut: false, value: 'blue' })
  })

  it('accepts combinators with and without any', () => {
    const withoutAny: AwakeableToolCombinators = { all: values => Promise.all(values), race: values => Promise.race(values) }
    const withAny: AwakeableToolCombinators = { ...withoutAny, any: values => Promise.any(values) }
    expect('any' in withoutAny).toBe(false)
    expect('any' in withAny).toBe(true)
    expect(typeof (RestatePromise as AwakeableToolCombinators).any).toBe('function')
  })
})
