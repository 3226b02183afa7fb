import * as restate from '@restatedev/restate-sdk'

/**
 * Reads `keys` of an object's state in one round trip: with lazy state each `get` is a command whose promise is a
 * durable one (the SDK types it as a plain one), so the reads join durably. Missing keys read as null.
 */
export function readState(ctx: restate.ObjectSharedContext, keys: readonly string[]): restate.RestatePromise<unknown[]> {
  return restate.RestatePromise.all(keys.map(key => ctx.get<unknown>(key) as unknown as restate.RestatePromise<unknown>))
}
