import type { ToolDef } from 'zidane'

/** A tool that records when each call started and ended, sleeping `delayMs`. */
export function timedTool(name: string, options: { delayMs: number; safe: boolean; log: Array<{ name: string; input: string; start: number; end: number }> }): ToolDef {
  return {
    spec: { name, description: `${name} (test)`, inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
    isConcurrencySafe: options.safe,
    ...(options.safe ? { replay: 'safe' as const } : {}),
    execute: async input => {
      const start = Date.now()
      await new Promise(resolve => setTimeout(resolve, options.delayMs))
      options.log.push({ name, input: String(input.id), start, end: Date.now() })
      return `${name}:${String(input.id)}`
    },
  }
}

/** A tool that counts its side effects in `ledger` (the crash tests' outside-the-process record, in memory). */
export function countingTool(name: string, ledger: string[], options: { safe?: boolean; delayMs?: number } = {}): ToolDef {
  return {
    spec: { name, description: `${name} (test)`, inputSchema: { type: 'object', properties: {}, additionalProperties: true } },
    ...(options.safe ? { replay: 'safe' as const, isConcurrencySafe: true } : {}),
    execute: async () => {
      ledger.push(name)
      if (options.delayMs) await new Promise(resolve => setTimeout(resolve, options.delayMs))
      return `${name} done`
    },
  }
}
