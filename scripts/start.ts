import { join, relative } from 'node:path'
import { loadStackConfig } from './stack/stack-config'
import { startBanner } from './stack/start-banner'
import { startStack } from './stack/start-stack'
import type { ProcessHandle } from './stack/supervisor'

/** What the banner says `npm start` is not: the way releases reach production (docs/operations.md). */
const DEVELOPMENT_STACK = [
  'This is a development stack: it serves the code in this folder and registers it over the last start (force), so a',
  'run waiting across a code change may not resume. Releases roll as new deployments: docs/operations.md#roll-a-release',
  '',
].join('\n')

/** `npm start`: the whole stack on one machine, supervised, until Ctrl-C. */
async function main(): Promise<void> {
  const config = await loadStackConfig()
  const processes: ProcessHandle[] = []
  let stopping = false
  const shutdown = async (code: number): Promise<void> => {
    if (stopping) return
    stopping = true
    console.log('[stack] stopping…')
    for (const handle of [...processes].reverse()) await handle.stop()
    console.log('[stack] stopped')
    process.exit(code)
  }
  // Last resort: never leave a child behind, whatever ends this process.
  process.on('exit', () => { for (const handle of processes) handle.current()?.kill('SIGKILL') })
  const onFatal = (reason: string): void => {
    const why = reason.startsWith('restate ')
      ? `The Restate server is the journal of every run; the stack cannot go on without it and stops now. Sessions are kept in ${config.dataDir}; run npm start again.`
      : 'The stack stops now; fix the cause and run npm start again (sessions are kept).'
    console.error(`[stack] ${reason}. ${why}`)
    void shutdown(1)
  }
  process.on('SIGINT', () => { void shutdown(0) })
  process.on('SIGTERM', () => { void shutdown(0) })
  const stack = await startStack(config, onFatal, {}, undefined, processes).catch((error: unknown) => {
    console.error(`[stack] ${error instanceof Error ? error.message : String(error)}. The stack stops now.`)
    return shutdown(1).then(() => undefined)
  })
  if (!stack) return
  console.log(startBanner({
    gatewayUrl: stack.gatewayUrl,
    gatewayApiKeys: config.gatewayApiKeys,
    keyFile: config.generatedKey ? relative(process.cwd(), join(config.dataDir, 'gateway-api-key')) || undefined : undefined,
    model: process.env.ANTHROPIC_API_KEY ? 'Anthropic' : 'the deterministic demo model (set ANTHROPIC_API_KEY for Claude)',
  }))
  console.log(DEVELOPMENT_STACK)
}

await main()
