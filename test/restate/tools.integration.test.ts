import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ToolDef, ToolOutput, ToolResult } from '../../src/tools/tool'
import { restateAwakeableTool, restateRuntime, restateTool, restateWaitBackground } from '../../src/restate/index'
import type { TaskExitInfo } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import { toolContext } from '../helpers/restate/tool-context'

const counters = new Map<string, number>()
const bump = (name: string): number => { const next = (counters.get(name) ?? 0) + 1; counters.set(name, next); return next }
const failedOnce = new Set<string>()
const resumers = new Map<string, string>()

const longJob: ToolDef = {
  spec: { name: 'long_job', description: 'A long job.', inputSchema: { type: 'object', properties: { inline: { type: 'boolean' } } } },
  execute: async () => { throw new Error('bypassed by durableStart') },
}
const flaky: ToolDef = {
  spec: { name: 'flaky', description: 'Fails.', inputSchema: { type: 'object' } },
  execute: async () => { throw new Error('disk full') },
}

const toolProbe = restate.object({
  name: 'ToolProbe',
  handlers: {
    durableStart: async (ctx: restate.ObjectContext, inline: boolean): Promise<ToolOutput | ToolResult> => {
      const key = ctx.key
      const runtime = restateRuntime(ctx, { promises: RestatePromise, idSeed: key })
      const tool = restateTool<string, { code: number }>(longJob, ctx, {
        durableStart: {
          start: () => `job-${key}-${bump(`${key}:start`)}`,
          wait: {
            inline: token => inline && token.length > 0,
            register: (token, awakeableId) => { bump(`${key}:register`); resumers.set(key, awakeableId); ctx.console.log(token) },
            result: (token, resumed) => `${token} exited ${resumed?.code ?? 'inline'}`,
            promises: RestatePromise,
            timeoutMs: 60_000,
          },
        },
      })
      const output = await tool.execute({ inline }, toolContext(runtime, { callId: 'call-1' }))
      if (!failedOnce.has(key)) {
        failedOnce.add(key)
        throw new Error('replay me')
      }
      return output
    },
    resumer: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<string | null> => resumers.get(ctx.key) ?? null),
    softError: async (ctx: restate.ObjectContext): Promise<string> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise })
      const tool = restateTool(flaky, ctx)
      try {
        await tool.execute({}, toolContext(runtime, { callId: 'c' }))
        return 'no error'
      } catch (error) {
        return `${(error as Error).message}:${runtime.isControlError(error)}`
      }
    },
    ask: async (ctx: restate.ObjectContext): Promise<ToolResult[]> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise })
      const ask = restateAwakeableTool<string>({
        ctx, name: 'ask_user', description: 'Ask.', inputSchema: { type: 'object' }, promises: RestatePromise, isConcurrencySafe: true,
        notify: ({ awakeableId, input }) => { bump(`${ctx.key}:notify`); resumers.set(`${ctx.key}:${String(input.q)}`, awakeableId) },
      })
      const calls = ['a', 'b'].map(q => ask.execute({ q }, toolContext(runtime, { callId: `call-${q}` })) as Promise<ToolResult>)
      return runtime.all(calls)
    },
    askResumer: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, q: string): Promise<string | null> => resumers.get(`${ctx.key}:${q}`) ?? null),
    waitTask: async (ctx: restate.ObjectContext, status: 'running' | 'exited' | 'absent'): Promise<TaskExitInfo | null> => {
      const wait = restateWaitBackground({
        ctx, promises: RestatePromise, timeoutMs: 60_000,
        register: awakeableId => { resumers.set(`${ctx.key}:task`, awakeableId) },
        probe: () => (status === 'absent' ? [] : [{ id: 't1', status, ...(status === 'exited' ? { exit: { exitCode: 3 } } : {}) }]),
      })
      return wait({}, 't1')
    },
    taskResumer: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<string | null> => resumers.get(`${ctx.key}:task`) ?? null),
  },
})

describe.each(REPLAY_MODES)('Restate tools against a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => harness as RestateHarness
  beforeAll(async () => { harness = await startRestateHarness({ services: [toolProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('durableStart starts once and re-attaches to the same token after a replay', async () => {
    const key = `ds-${alwaysReplay}`
    const invocationId = await h().send(`ToolProbe/${key}/durableStart`, false)
    const awakeableId = await h().waitFor(async () => (await h().call<string | null>(`ToolProbe/${key}/resumer`)).body, 20_000, 'resumer')
    expect(await h().resolveAwakeable(awakeableId, { code: 0 })).toBe(202)
    const result = await h().attach(invocationId)
    expect(result.body).toBe(`job-${key}-1 exited 0`)
    expect(counters.get(`${key}:start`)).toBe(1)
    expect(counters.get(`${key}:register`)).toBe(1)
  })

  it('durableStart inline skips the park entirely', async () => {
    const key = `dsi-${alwaysReplay}`
    const result = await h().call(`ToolProbe/${key}/durableStart`, true)
    expect(result.body).toBe(`job-${key}-1 exited inline`)
    expect(counters.get(`${key}:register`)).toBeUndefined()
  })

  it('keeps an ordinary tool throw soft (non-control)', async () => {
    const result = await h().call(`ToolProbe/soft-${alwaysReplay}/softError`)
    expect(result.body).toBe('disk full:false')
  })

  it('parks two awakeable tool calls joined by RestatePromise.all, notifying once each', async () => {
    const key = `ask-${alwaysReplay}`
    const invocationId = await h().send(`ToolProbe/${key}/ask`)
    for (const q of ['b', 'a']) {
      const id = await h().waitFor(async () => (await h().call<string | null>(`ToolProbe/${key}/askResumer`, q)).body, 20_000, `resumer ${q}`)
      expect(await h().resolveAwakeable(id, `answer ${q}`)).toBe(202)
    }
    const result = await h().attach<ToolResult[]>(invocationId)
    expect(result.body).toEqual([{ content: 'answer a' }, { content: 'answer b' }])
    expect(counters.get(`${key}:notify`)).toBe(2)
  })

  it('waitBackground returns at once for an exited or unknown task and parks for a running one', async () => {
    expect((await h().call(`ToolProbe/wx-${alwaysReplay}/waitTask`, 'exited')).body).toEqual({ exitCode: 3 })
    expect((await h().call(`ToolProbe/wa-${alwaysReplay}/waitTask`, 'absent')).body).toBeNull()
    const key = `wr-${alwaysReplay}`
    const invocationId = await h().send(`ToolProbe/${key}/waitTask`, 'running')
    const id = await h().waitFor(async () => (await h().call<string | null>(`ToolProbe/${key}/taskResumer`)).body, 20_000, 'task resumer')
    expect(await h().resolveAwakeable(id, { exitCode: 0 })).toBe(202)
    expect((await h().attach(invocationId)).body).toEqual({ exitCode: 0 })
  })
})
