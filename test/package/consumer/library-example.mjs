// The README's library example, as a project that installed the packed tarball runs it under plain node.
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { createBuiltinTools } from 'zidane/tools'

const agent = createAgent({
  provider: demoProvider(),
  tools: createBuiltinTools({ root: './workspace' }),
  behavior: { maxTurns: 20, maxConcurrentTools: 10 },
})
const stats = await agent.run({ prompt: 'write: hello.txt Hello\nread: hello.txt' })
console.log(stats.status, stats.turns, stats.costUsd)
