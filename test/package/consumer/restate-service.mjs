// A user's own Restate service written with zidane/restate: one virtual object whose `run` handler runs an agent
// durably in the object's key. Listens on PORT.
import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { restateRuntime } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import { createBuiltinTools } from 'zidane/tools'

const triage = restate.object({
  name: 'Triage',
  handlers: {
    run: async (ctx, request) => {
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const store = durable.stores.session
      const session = await loadSession(store, ctx.key) ?? await createSession({ id: ctx.key, store })
      const agent = createAgent({ provider: demoProvider(), tools: createBuiltinTools({ root: './workspace' }), durable, session })
      const stats = await agent.run({ prompt: request.prompt })
      return { status: stats.status, turns: stats.turns, text: stats.text }
    },
  },
})

await restate.endpoint().bind(triage).listen(Number(process.env.PORT))
console.log('consumer service listening')
