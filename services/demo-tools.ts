import * as restate from '@restatedev/restate-sdk'
import type { ToolDef } from 'zidane'

/**
 * The demo tool `fail` (demo directive `fail: <message>`): throws a Restate terminal error, so the run fails for good.
 * It shows, on the real path, how a failed run is recorded (status `failed`, its open call closed) and healed by the
 * next prompt. Served with the demo model, or with `ZIDANE_DEMO_TOOLS=1`.
 */
export function demoTools(): ToolDef[] {
  return [{
    spec: {
      name: 'fail',
      description: 'Fails the run for good with a terminal error (a demonstration of failure handling).',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'], additionalProperties: false },
    },
    execute: async input => { throw new restate.TerminalError(`demo failure: ${String(input.message)}`) },
  }]
}
