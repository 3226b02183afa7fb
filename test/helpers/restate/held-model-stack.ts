import { afterAll, beforeAll } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedMessage, ScriptedResponse } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from './restate-harness'
import type { RestateHarness } from './restate-harness'
import { lateDoorbell, loadSessionServices } from './session-services'

/** Options of {@link useHeldModelStack}. */
export interface HeldModelStackOptions {
  /** The model's answer while the request holds no assistant turn yet; omitted, the first call is held too. */
  firstAnswer?: ScriptedMessage['content']
  /** Give the services an event doorbell (connected to the harness's ingress once it is up). */
  doorbell?: boolean
  /** Whether a viewer follows a log live, as the doorbell asks the services' live hub (default: never). */
  followed?: (logKey: string) => boolean
  /** The model's script instead of the default one; `held` settles at `release()`. */
  script?: (request: RecordedRequest, held: Promise<void>) => Promise<ScriptedResponse>
}

/** The deployment's services on a real Restate server, with a model server that holds its calls until `release`. */
export interface HeldModelStack {
  harness(): RestateHarness
  model(): FakeAnthropicServer
  /** Lets every held model call, and those after it, answer `done`. */
  release(): void
  /** The services' doorbell, when asked for. */
  readonly doorbell: ReturnType<typeof lateDoorbell>['doorbell'] | undefined
}

/**
 * Starts, in the calling `describe` (beforeAll / afterAll), the fake Anthropic server and a Restate harness serving
 * the deployment's services with the model's environment set (`name` names the API key): the model answers
 * `options.firstAnswer` to a request without an assistant turn, and holds every other call until `release()`, then
 * answers `done`. For tests that look at a run while it waits in a model call.
 */
export function useHeldModelStack(name: string, options: HeldModelStackOptions = {}): HeldModelStack {
  const env = { ANTHROPIC_API_KEY: `sk-ant-${name}`, ZIDANE_MODEL: 'claude-test' }
  const bell = options.doorbell ? lateDoorbell(options.followed) : undefined
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => { release = resolve })
  beforeAll(async () => {
    model = await startModelServer({ apiKey: env.ANTHROPIC_API_KEY })
    model.setHandler(async (request) => {
      if (options.script) return options.script(request, held)
      const messages = (request.body?.messages ?? []) as Array<{ role: string }>
      if (options.firstAnswer && !messages.some(message => message.role === 'assistant')) return { kind: 'message', content: options.firstAnswer }
      await held
      return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    })
    Object.assign(process.env, env, { ANTHROPIC_BASE_URL: model.url })
    harness = await startRestateHarness({ services: loadSessionServices({}, bell ? { doorbell: bell.doorbell } : {}) })
    bell?.connect(harness.ingressUrl)
  })
  afterAll(async () => {
    release()
    for (const key of [...Object.keys(env), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, key)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)
  return {
    harness: () => { if (!harness) throw new Error('no harness'); return harness },
    model: () => { if (!model) throw new Error('no model server'); return model },
    release: () => release(),
    doorbell: bell?.doorbell,
  }
}
