import { execFile } from 'node:child_process'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedResponse } from '../../support/anthropic-server'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'
import { launchChatBrowser } from './chat-browser'
import type { ChatBrowser } from './chat-browser'

/*
 * The console (ingress-gateway/console, served at /console) in headless chromium against the whole stack: from an
 * empty browser, sign in, start a session from the prompt box, watch its tokens stream, answer a question, see a
 * sub-agent, approve a tool call, steer, cancel a second run, read the costs and the trace id, find the session in the
 * list and delete it. Every action is at most two clicks from the session view; the browser logs no error throughout.
 */

const MODEL_KEY = 'sk-ant-console'
const REPOSITORY = join(import.meta.dirname, '..', '..')
/** Where the screenshots of the main views go (gitignored). */
const SCREENSHOTS = join(REPOSITORY, 'test-results', 'console-screenshots')
const SESSION = 'console-tour'
const STEERING = 'prefer the eu-west region'

/** The first user text of a request: the run's prompt (a steering message comes later, as a user message too). */
function promptOf(request: RecordedRequest): string {
  const messages = (request.body?.messages as unknown as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }> | undefined) ?? []
  const first = messages.find(message => message.role === 'user')
  return typeof first?.content === 'string' ? first.content : (first?.content ?? []).map(block => block.text ?? '').join('')
}

function turnOf(request: RecordedRequest): number {
  return ((request.body?.messages as unknown as Array<{ role: string }> | undefined) ?? []).filter(message => message.role === 'assistant').length
}

function allUserText(request: RecordedRequest): string {
  return JSON.stringify(request.body?.messages ?? [])
}

/** The scripted model of the tour: stream, ask, spawn, call `shell` (which the prompt's policy makes wait), finish. */
function tourTurn(request: RecordedRequest): ScriptedResponse {
  const streamed = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ')
  switch (turnOf(request)) {
    case 0: return { kind: 'message', content: [{ type: 'text', text: streamed }, { type: 'tool_use', name: 'ask_user', input: { question: 'Which region?' } }], deltaIntervalMs: 60 }
    case 1: return { kind: 'message', content: [{ type: 'tool_use', name: 'spawn', input: { task: 'check the region' } }] }
    case 2: return { kind: 'message', content: [{ type: 'tool_use', name: 'shell', input: { command: 'echo approved' } }] }
    default: return { kind: 'message', content: [{ type: 'text', text: allUserText(request).includes(STEERING) ? 'done, steered to eu-west' : 'done' }] }
  }
}

describe('the console in a real browser', { timeout: 150_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  let chromium: ChatBrowser | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, [join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', join(REPOSITORY, 'ingress-gateway', 'console')]).catch((error: { stdout?: string }) => {
      throw new Error(`the console does not type-check:\n${error.stdout ?? String(error)}`)
    })
    await mkdir(SCREENSHOTS, { recursive: true })
    model = await start({ apiKey: MODEL_KEY })
    model.setHandler(request => {
      // A run started by a message sees the session's whole history: its own prompt is the last user text.
      if (lastUserText(request) === 'a long run') return streamedWords(400, 50)
      const prompt = promptOf(request)
      if (prompt === 'tour') return tourTurn(request)
      if (prompt === 'check the region') return { kind: 'message', content: [{ type: 'text', text: 'eu-west is up' }] }
      return { kind: 'message', content: [{ type: 'text', text: 'ok' }] }
    })
    // A priced model, so every cost on screen is above zero; one tenant and no sandbox for `shell`.
    stack = await startTestStack({ ANTHROPIC_API_KEY: MODEL_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-sonnet-5-5', ZIDANE_SANDBOX: 'off' }, { tenants: 1 })
    chromium = await launchChatBrowser()
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.destroy()
    await model?.close()
  })

  const view = async (): Promise<{ status: string; runs: Array<{ id: string; status: string; label?: string; traceId?: string; totals?: { costUsd: number } }> } | undefined> => {
    const response = await s().request(`/v1/sessions/${SESSION}`)
    return response.status === 200 ? ((await response.json()) as never) : undefined
  }
  const runEnded = (count: number) => waitFor(async () => {
    const current = await view()
    const top = current?.runs.filter(run => run.label === undefined) ?? []
    return top.length >= count && top.at(-1)?.status !== 'running' ? current : undefined
  }, 60_000, `run ${count} of the session to end`)
  const shoot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })

  it('sign in, run a session through a question, a sub-agent, an approval, steering and a cancel, find it and delete it', async () => {
    const startedAtMs = performance.now()
    const page = await chromium!.browser.newPage({ viewport: { width: 1366, height: 900 } })
    const errors: string[] = []
    page.on('console', message => { if (message.type() === 'error' || message.type() === 'warning') errors.push(`[console ${message.type()}] ${message.text()}`) })
    page.on('pageerror', error => errors.push(`[pageerror] ${error.message}`))
    page.on('response', response => { if (response.status() >= 400) errors.push(`[http ${response.status()}] ${response.request().method()} ${response.url()}`) })
    try {
      await tour(page, errors)
    } catch (error) {
      await shoot(page, 'failure')
      console.error(`[console] the page at the failure:\n${await page.locator('main').innerText()}\nerrors: ${errors.join('\n')}`)
      throw error
    }
    console.log(`[console] the tour took ${((performance.now() - startedAtMs) / 1000).toFixed(1)} s`)
    await page.close()
    await copyFile(join(SCREENSHOTS, '4-session-done.png'), join(SCREENSHOTS, 'readme.png'))
  })

  async function tour(page: Page, errors: string[]): Promise<void> {

    // The root redirects to the console, which asks for a key; the key is checked, then kept for the tab.
    const response = await page.goto(`${s().gatewayUrl}/`)
    expect(new URL(page.url()).pathname).toBe('/console')
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'")
    await page.getByTestId('api-key').waitFor()
    await shoot(page, '1-sign-in')
    await page.getByTestId('api-key').fill(s().apiKeys[0])
    await page.keyboard.press('Enter')

    // A new session from the prompt box: `shell` waits for approval (the prompt's policy); Enter starts it.
    await page.getByTestId('new-prompt').waitFor()
    await page.getByTestId('new-id').fill(SESSION)
    await page.getByTestId('new-approve').fill('shell')
    await page.getByTestId('new-prompt').fill('tour')
    await page.getByTestId('new-prompt').press('Enter')
    await page.getByTestId('session-id').waitFor({ timeout: 15_000 })
    expect(await page.getByTestId('session-id').textContent()).toBe(SESSION)

    // Tokens arrive: the step's text grows while the model streams, before the turn ends.
    const text = page.getByTestId('assistant-text').first()
    await expect.poll(() => text.textContent(), { timeout: 20_000 }).toMatch(/word3\b/)
    const partial = (await text.textContent()) ?? ''
    expect(partial).not.toContain('word39')
    await expect.poll(() => text.textContent(), { timeout: 20_000 }).toContain('word39')

    // The question: typed and answered with Enter.
    await page.getByTestId('answer-input').waitFor({ timeout: 20_000 })
    await shoot(page, '2-session-question')
    await page.getByTestId('answer-input').fill('eu-west')
    await page.getByTestId('answer-input').press('Enter')

    // The sub-agent shows under its spawn call, to its end, with its cost.
    const subagent = page.locator('[data-testid="tool-call"][data-tool="spawn"] [data-testid="subagent"]').first()
    await subagent.waitFor({ timeout: 20_000 })
    await expect.poll(() => subagent.getByTestId('status').first().textContent(), { timeout: 20_000 }).toBe('completed')
    expect(await subagent.textContent()).toContain('check the region')
    expect(await subagent.textContent()).toContain('eu-west is up')
    expect(await subagent.getByTestId('agent-totals').textContent()).toMatch(/\$0\.0\d*[1-9]/)

    // The approval, while the run waits: steer first (delivered after the approval), then approve with one click.
    await page.getByTestId('approve').waitFor({ timeout: 20_000 })
    expect(await page.getByTestId('approval').textContent()).toContain('echo approved')
    await page.getByTestId('steer-input').fill(STEERING)
    await page.getByTestId('steer-input').press('Enter')
    await expect.poll(() => page.getByTestId('steer-input').inputValue()).toBe('')
    await shoot(page, '3-session-approval')
    await page.getByTestId('approve').click()
    const first = await runEnded(1)
    expect(first.runs.filter(run => run.label === undefined).at(-1)?.status).toBe('completed')
    await expect.poll(() => page.getByTestId('steer').first().textContent(), { timeout: 15_000 }).toContain(STEERING)
    await expect.poll(() => page.getByTestId('assistant-text').last().textContent(), { timeout: 15_000 }).toBe('done, steered to eu-west')
    const shellCall = page.locator('[data-testid="tool-call"][data-tool="shell"]')
    await shellCall.locator('summary').click()
    await expect.poll(() => shellCall.getByTestId('tool-output').textContent()).toContain('approved')

    // The run's cost and trace id, as the API has them.
    const run = first.runs.find(candidate => candidate.label === undefined)!
    expect(run.totals?.costUsd).toBeGreaterThan(0)
    const row = page.locator(`[data-testid="run-row"][data-run-id="${run.id}"]`)
    await expect.poll(() => row.getByTestId('run-cost').textContent(), { timeout: 10_000 }).toBe(`$${run.totals!.costUsd.toFixed(6)}`)
    await expect.poll(() => page.getByTestId('run-totals').first().textContent(), { timeout: 10_000 }).toContain(`$${run.totals!.costUsd.toFixed(6)}`)
    if (run.traceId !== undefined) expect(await row.getByTestId('run-trace').textContent()).toBe(run.traceId)
    await shoot(page, '4-session-done')

    // A second run from the steering box, cancelled with one click once its tokens stream.
    await page.getByTestId('steer-input').fill('a long run')
    await page.getByTestId('steer-send').click()
    await expect.poll(() => page.getByTestId('assistant-text').last().textContent(), { timeout: 20_000 }).toMatch(/word10\b/)
    await expect.poll(() => page.getByTestId('cancel').isEnabled(), { timeout: 10_000 }).toBe(true)
    await page.getByTestId('cancel').click()
    const second = await runEnded(2)
    expect(second.runs.filter(run => run.label === undefined).at(-1)?.status).toBe('cancelled')
    await expect.poll(() => page.locator('[data-testid="run"]').last().getByTestId('status').first().textContent(), { timeout: 15_000 }).toBe('cancelled')

    // Found again through the list: search by id and filter by status.
    await page.getByRole('link', { name: '← Sessions' }).click()
    await page.getByTestId('search').fill('tour')
    await page.getByTestId('filter-cancelled').check()
    const listed = page.locator(`[data-testid="session-row"][data-session-id="${SESSION}"]`)
    await listed.waitFor({ timeout: 10_000 })
    await shoot(page, '5-session-list')
    await page.getByTestId('filter-cancelled').uncheck()
    await page.getByTestId('filter-completed').check()
    await expect.poll(() => listed.count(), { timeout: 10_000 }).toBe(0)
    await page.getByTestId('filter-completed').uncheck()
    await listed.waitFor({ timeout: 10_000 })
    await listed.getByRole('link').click()

    // Deleted in two clicks; the list says so and the API no longer has it.
    await page.getByTestId('delete').click()
    await page.getByTestId('confirm-delete').click()
    await page.getByText(`Session ${SESSION} deleted.`).waitFor({ timeout: 30_000 })
    expect((await s().request(`/v1/sessions/${SESSION}`)).status).toBe(404)
    await expect.poll(() => listed.count(), { timeout: 10_000 }).toBe(0)

    expect(errors).toEqual([])
  }
})
