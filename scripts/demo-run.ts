import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { createBuiltinTools } from 'zidane/tools'

/** Runs one demo agent run in-process with the deterministic demo model and prints its turns. */
async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'zidane-demo-'))
  const agent = createAgent({ provider: demoProvider(), tools: createBuiltinTools({ root }) })
  const stats = await agent.run({ prompt: process.argv[2] ?? 'write: hello.txt Hello from zidane\nread: hello.txt' })
  const session = await agent.session()
  for (const turn of session.turns) console.log(`[${turn.role}] ${JSON.stringify(turn.content)}`)
  console.log(`status=${stats.status} turns=${stats.turns} toolCalls=${stats.toolCalls}`)
}

await main()
