import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as restate from '@restatedev/restate-sdk'
import { createAttemptDrain } from '../../../services/drain/attempt-drain'
import type { AttemptDrain } from '../../../services/drain/attempt-drain'
import { startRestateHarness } from '../../helpers/restate/restate-harness'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

/**
 * A handler that journals one step, then waits outside the journal (a plain promise the test releases), then starts a
 * second step: the test closes the attempt's stream from Restate's side while the handler waits.
 */
function lateStepService(state: { atGate: boolean; release: () => void; lateRan: number }): restate.ServiceDefinition<string, unknown> {
  return restate.service({
    name: 'lateStep',
    handlers: {
      run: async (ctx: restate.Context): Promise<string> => {
        await ctx.run('first', () => 'journaled')
        await new Promise<void>(resolve => { state.release = resolve; state.atGate = true })
        await ctx.run('late', () => { state.lateRan++ })
        return 'done'
      },
    },
  })
}

/** An endpoint on a loopback port; `close()` also drops Restate's open connections, as a process exit would. */
interface ServedEndpoint { uri: string; port: number; close(): Promise<void> }

/** Serves `services` over HTTP/2 behind `drain`, as `services/endpoint.ts` does, on `port` (0: a free one). */
async function serveBehindDrain(drain: AttemptDrain, services: restate.ServiceDefinition<string, unknown>[], port = 0): Promise<ServedEndpoint> {
  const handler = restate.createEndpointHandler({ services, defaultServiceOptions: { hooks: [drain.hooks] }, logger: () => undefined })
  const server = http2.createServer(drain.handler(handler))
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', session => { sessions.add(session); session.on('close', () => sessions.delete(session)) })
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  return {
    uri: `http://127.0.0.1:${bound}`,
    port: bound,
    close: async () => {
      const closed = new Promise(resolve => server.close(resolve))
      for (const session of sessions) session.destroy()
      await closed
    },
  }
}

/** `promise`, or a rejection naming `what` after `ms`. */
async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms) })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

describe('attempt drain on a real Restate server', () => {
  let harness: RestateHarness
  let endpoint: ServedEndpoint | undefined
  const drain = createAttemptDrain()
  const state = { atGate: false, release: () => undefined as void, lateRan: 0 }

  beforeAll(async () => {
    harness = await startRestateHarness()
    endpoint = await serveBehindDrain(drain, [lateStepService(state)])
    await harness.registerDeployment(endpoint.uri)
  }, 60_000)

  afterAll(async () => {
    await endpoint?.close()
    await harness?.stop()
  })

  it('a step that would start after the drain ended its idle attempt never runs; the retry on the next process runs it', async () => {
    const id = await harness.send('lateStep/run', null)
    await harness.waitFor(() => state.atGate, 20_000, 'the handler to wait between its steps')
    expect(drain.openAttempts()).toBe(1)
    await withinMs(drain.drain(), 10_000, 'the drain to end the idle attempt')
    state.release()
    // The late step's closure would start within a turn or two of the event loop; give it far longer.
    await new Promise(resolve => setTimeout(resolve, 500))
    expect(state.lateRan).toBe(0)
    expect(drain.runningSteps()).toBe(0)
    // Restate journaled the first step only, and retries the invocation: the next process replays it and runs the
    // late step there, once.
    const steps = await harness.query<{ name: string }>(`SELECT name FROM sys_journal WHERE id = '${id}' AND entry_type = 'Command: Run' ORDER BY index`)
    expect(steps.map(step => step.name)).toEqual(['first'])
    // The invocation stays on its deployment: the next process listens where the drained one did.
    state.atGate = false
    const port = endpoint?.port
    await endpoint?.close()
    endpoint = await serveBehindDrain(createAttemptDrain(), [lateStepService(state)], port)
    try {
      await harness.waitFor(() => state.atGate, 20_000, 'the retry to reach the wait')
      state.release()
      expect((await harness.attach<string>(id)).body).toBe('done')
      expect(state.lateRan).toBe(1)
    } finally {
      state.release()
    }
  })
})
