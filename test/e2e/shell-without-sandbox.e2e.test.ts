import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

describe('two tenants and no usable sandbox', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ ZIDANE_SANDBOX_BWRAP: '/nonexistent/bwrap' }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  it('starts with shell disabled and says so at start-up and in /readyz', async () => {
    expect(s().shell.mode).toBe('disabled')
    expect(s().output()).toContain('shell: disabled')
    const ready = (await (await s().request('/readyz', { key: null })).json()) as { status: string; shell: { mode: string; reason: string } }
    expect(ready).toMatchObject({ status: 'ready', shell: { mode: 'disabled' } })
    expect(ready.shell.reason).toContain('/nonexistent/bwrap')
  })

  it('does not run a command for the model: shell is not among the tools', async () => {
    const response = await s().request('/v1/sessions/nosandbox/prompts?wait=true', { method: 'POST', key: s().apiKeys[1], body: JSON.stringify({ prompt: 'shell: echo ran-$((40+2))' }) })
    expect(response.status).toBe(200)
    const { text } = (await response.json()) as { text: string }
    expect(text).not.toContain('ran-42')
    expect(text).not.toContain('Exit code')
  })
})
