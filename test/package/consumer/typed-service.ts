// A user's TypeScript against the installed package: the test compiles it with `moduleResolution: nodenext`, so every
// entry point's `types` must resolve to real declarations.
import type { ObjectContext } from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { awakeableWithTimeout, restateRuntime } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import { createBuiltinTools } from 'zidane/tools'
import { createSqliteRuntime } from 'zidane/durable/sqlite'

export async function handler(ctx: ObjectContext): Promise<AgentStats> {
  const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
  const store = durable.stores.session
  const session = await loadSession(store, ctx.key) ?? await createSession({ id: ctx.key, store })
  const question = awakeableWithTimeout<string, RestatePromise<unknown>>(ctx, { timeoutMs: 1000, promises: RestatePromise })
  void question
  const agent = createAgent({ provider: demoProvider(), tools: createBuiltinTools({ root: '.' }), durable, session })
  return agent.run({ prompt: 'hello' })
}

