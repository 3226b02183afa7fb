import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { createBuiltinTools, createInteractionTools, createSpawnTool } from 'zidane/tools'
import { useSandbox } from '../tools/builtin/tool-context'

function demoAgent(root: string) {
  const spawn = createSpawnTool({ createAgent, childAgent: () => ({ provider: demoProvider() }) })
  const agent = createAgent({
    provider: demoProvider(),
    tools: [...createBuiltinTools({ root }), spawn, ...createInteractionTools({ requestInteraction: request => { void agent.runtime.resolveAwakeable(request.awakeable.id, 'green') } })],
  })
  return agent
}

describe('the demo model', () => {
  const sandbox = useSandbox()

  it('echoes a prompt without directives', async () => {
    const stats = await demoAgent(sandbox.root).run({ prompt: 'hello there' })
    expect(stats.text).toBe('Echo: hello there')
  })

  it('asks the user and answers with what they said', async () => {
    const stats = await demoAgent(sandbox.root).run({ prompt: 'ask: favourite colour?' })
    expect(stats.text).toBe('You said: green')
  })

  it('writes, reads and lists files, and runs shell commands, one directive per turn', async () => {
    const stats = await demoAgent(sandbox.root).run({ prompt: 'write: notes.txt hello file\nread: notes.txt\nlist: .\nshell: echo from-shell' })
    expect(stats.turns).toBe(5)
    expect(stats.text).toContain('hello file')
    expect(stats.text).toContain('notes.txt')
    expect(stats.text).toContain('from-shell')
  })

  it('calls any tool with a JSON input, once per element of a JSON array in one turn, and passes non-JSON on for the tool to refuse', async () => {
    const stats = await demoAgent(sandbox.root).run({ prompt: 'tool: write_file {"path":"a.txt","content":"from-json"}\ntool: read_file [{"path":"a.txt"},{"path":"a.txt","limit":1}]\ntool: glob not json' })
    expect(stats.turns).toBe(4)
    expect(stats.text.match(/from-json/g)?.length).toBe(2)
    expect(stats.text).toMatch(/pattern/)
  })

  it('spawns one child per task in a single turn and summarizes their answers', async () => {
    const agent = demoAgent(sandbox.root)
    const started: string[] = []
    agent.hooks.hook('child:run:start', event => { started.push(event.task) })
    const stats = await agent.run({ prompt: 'spawn: alpha | beta | gamma' })
    expect(started).toEqual(['alpha', 'beta', 'gamma'])
    // Two turns of its own and one for each child: a run's counts include its sub-agents' work.
    expect(stats.turns).toBe(2 + 3)
    expect(stats.text).toBe('Children answered: Echo: alpha / Echo: beta / Echo: gamma')
  })
})
