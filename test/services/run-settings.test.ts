import { describe, expect, it } from 'vitest'
import type { ToolDef } from 'zidane'
import { restateSpawnTool } from 'zidane/restate'
import { loadServicesConfig } from '../../services/config'
import { SPAWN_TOOL } from '../../contract/session'
import { currentRunSettings, toolsOfSettings } from '../../services/run-settings'
import { childPermission } from '../../services/child-runner/child-service'
import { INTERACTION_TOOL_NAMES, restateInteractionTools } from '../../services/agent-object/restate-interaction-tools'
import { createToolContext } from '../tools/builtin/tool-context'

const tool = (name: string): ToolDef => ({ spec: { name, description: name, inputSchema: { type: 'object' } }, isConcurrencySafe: name === 'read_file', execute: async () => `${name} ran` })
const candidates = ['read_file', 'write_file', 'shell', 'spawn'].map(tool)
const names = (tools: ToolDef[]): string[] => tools.map(each => each.spec.name)
const asking: ToolDef = { ...tool('ask_user'), journal: 'self' }
const sandboxed = { mode: 'sandboxed', reason: 'bubblewrap' } as const

describe('run settings', () => {
  it('hold what the environment says for a run that starts now, and the names of the tools offered', () => {
    const config = loadServicesConfig({ ZIDANE_MAX_TURNS: '7', ZIDANE_DENY_TOOLS: 'shell', ZIDANE_QUESTION_TIMEOUT_MS: '5000', ZIDANE_COMPACT_BUDGET_TOKENS: '3000' })
    expect(currentRunSettings(config, ['read_file'], { ZIDANE_MODEL: 'claude-x' })).toEqual({
      maxTurns: 7, model: 'claude-x', approveTools: [], denyTools: ['shell'], questionTimeoutMs: 5000, approvalTimeoutMs: 5000, compactBudgetTokens: 3000,
      maxChildDepth: 2, maxChildrenPerTurn: 8, maxChildrenPerRun: 32, tools: ['read_file'],
    })
  })

  it('offer the tools the run started with and not one added since, in the candidates\' order', async () => {
    const settings = currentRunSettings(loadServicesConfig({}), ['spawn', 'read_file'], {})
    const tools = toolsOfSettings(candidates, settings, { offered: ['read_file', 'write_file', 'spawn'], shell: sandboxed })
    expect(names(tools)).toEqual(['read_file', 'spawn'])
    expect(await tools[0]?.execute({}, createToolContext())).toBe('read_file ran')
  })

  it('refuse the calls of a tool the operator took away since, unless it journals itself; spec and flags unchanged', async () => {
    const settings = currentRunSettings(loadServicesConfig({}), ['read_file', 'write_file', 'ask_user'], {})
    const tools = toolsOfSettings([...candidates, asking], settings, { offered: ['write_file'], shell: sandboxed })
    expect(names(tools)).toEqual(['read_file', 'write_file', 'ask_user'])
    const [read, write, ask] = tools as [ToolDef, ToolDef, ToolDef]
    expect(read.spec).toEqual(tool('read_file').spec)
    expect(read.isConcurrencySafe).toBe(true)
    expect(await read.execute({}, createToolContext())).toEqual({ content: 'The read_file tool cannot run on this services process: the operator has disabled it since this run started.', isError: true })
    expect(await write.execute({}, createToolContext())).toBe('write_file ran')
    expect(ask).toBe(asking)
  })

  it('refuse the calls of a shell the run started with when this process cannot sandbox it; spec and flags unchanged', async () => {
    const settings = currentRunSettings(loadServicesConfig({}), ['shell', 'read_file'], {})
    const tools = toolsOfSettings(candidates, settings, { offered: ['read_file'], shell: { mode: 'disabled', reason: 'no usable sandbox' } })
    const shell = tools.find(each => each.spec.name === 'shell') as ToolDef
    expect(shell.spec).toEqual(tool('shell').spec)
    expect(await shell.execute({ command: 'echo hi' }, createToolContext())).toEqual({ content: 'The shell tool cannot run on this services process: no usable sandbox.', isError: true })
    expect(await (tools.find(each => each.spec.name === 'read_file') as ToolDef).execute({}, createToolContext())).toBe('read_file ran')
  })

  it('name the sub-agent and question tools as their builders do', () => {
    expect(restateSpawnTool({ dispatch: () => { throw new Error('not called') } }).spec.name).toBe(SPAWN_TOOL)
    expect(restateInteractionTools({} as never).map(each => each.spec.name)).toEqual([...INTERACTION_TOOL_NAMES])
  })

  it('in a sub-agent, refuse the denied tools and those the tree would ask a person about; none without a policy', () => {
    const settings = { ...currentRunSettings(loadServicesConfig({}), ['shell'], {}), approveTools: ['write_file'], denyTools: ['shell'] }
    const permission = childPermission(settings, { deny: ['grep'] })
    const call = (name: string) => ({ name, input: {}, id: `call_${name}` })
    expect(permission?.(call('shell') as never)).toEqual({ deny: 'the operator\'s policy denies this tool' })
    expect(permission?.(call('grep') as never)).toEqual({ deny: 'the prompt\'s policy denies this tool' })
    expect(permission?.(call('write_file') as never)).toEqual({ deny: 'this tool needs a person\'s approval, which a sub-agent cannot ask for' })
    expect(permission?.(call('read_file') as never)).toBe('allow')
    expect(childPermission(currentRunSettings(loadServicesConfig({}), [], {}), undefined)).toBeUndefined()
  })
})
