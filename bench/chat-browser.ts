/**
 * Section 13: the AI SDK `useChat` routes in a real browser (issue #28). The stock page of the browser tests
 * (test/browser/chat-page), served on its own origin, drives the whole stack in headless chromium. Two figures, each
 * over `trials` fresh sessions after a warm-up: the model server's first token to the text on screen (one wall clock:
 * the model server notes its send, a mutation observer in the page the first text), and the Stop click to the run
 * recorded `cancelled` (polling the session every 10 ms). Standalone: `npx tsx bench/chat-browser.ts [--quick]`.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import { lastUserText, start as startModelServer, streamedWords } from '../support/anthropic-server'
import type { FakeAnthropicServer } from '../support/anthropic-server'
import { startChatPage } from '../test/browser/build-chat-page'
import type { ChatPageServer } from '../test/browser/build-chat-page'
import { CHROMIUM_PATH, chatStatus, firstTextAtMs, launchChatBrowser, sendPrompt, waitForAssistantText } from '../test/browser/chat-browser'
import type { ChatBrowser } from '../test/browser/chat-browser'
import { UNLIMITED_GATEWAY } from './lib/full-stack'
import { startKeptStack } from './lib/kept-stack'
import type { KeptStack } from './lib/kept-stack'
import { parseOptions } from './lib/options'
import type { BenchOptions } from './lib/options'
import { figureOf, renderTable } from './lib/report'
import type { Report } from './lib/report'
import { pollUntil, summarize } from './lib/stats'

const SECTION = 13
const API_KEY = 'zk_bench_chat_browser_key'
const MODEL_KEY = 'sk-ant-bench-chat-browser'
const FIRST_TOKEN_TARGET_MS = 300
const CANCEL_TARGET_MS = 2_000

/** Everything a trial needs: the stack, the page server, chromium, and when the model server sent each text delta. */
interface Rig { kept: KeptStack; chatPage: ChatPageServer; chromium: ChatBrowser; model: FakeAnthropicServer; sentDeltasAtMs: number[] }

/** Wall clock in ms with sub-millisecond resolution, comparable with the page's `performance.timeOrigin + now()`. */
const wallMs = (): number => performance.timeOrigin + performance.now()

/** Measures section 13 and adds its figures to `report`. */
export async function measureChatBrowser(options: BenchOptions, report: Report): Promise<void> {
  if (!existsSync(CHROMIUM_PATH)) {
    report.notes.push(`§${SECTION} skipped: no chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`)
    return
  }
  const trials = options.quick ? 10 : 20
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-chat-'))
  const sentDeltasAtMs: number[] = []
  const model = await startModelServer({ apiKey: MODEL_KEY, onEventSent: event => { if (event.event === 'content_block_delta') sentDeltasAtMs.push(wallMs()) } })
  model.setHandler(request => (lastUserText(request) === 'stop me' ? streamedWords(1_000, 20) : streamedWords(40, 20)))
  let rig: Rig | undefined
  try {
    rig = await startRig(dataDir, model, sentDeltasAtMs)
    await firstTokenToScreen(rig, 'warm-up')
    await clickToCancelled(rig, 'warm-up-stop')
    const firstToken: number[] = []
    const cancel: number[] = []
    for (let trial = 0; trial < trials; trial++) {
      firstToken.push(await firstTokenToScreen(rig, `first-${process.pid}-${trial}`))
      cancel.push(await clickToCancelled(rig, `stop-${process.pid}-${trial}`))
    }
    if (rig.chromium.errors.length > 0) report.notes.push(`§${SECTION} browser console errors: ${rig.chromium.errors.slice(0, 5).join(' | ')}`)
    addFigures(report, firstToken, cancel)
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${rig?.kept.output() ?? ''}`, { cause: error })
  } finally {
    await rig?.chromium.close()
    await rig?.kept.stop()
    await rig?.chatPage.close()
    await model.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function startRig(dataDir: string, model: FakeAnthropicServer, sentDeltasAtMs: number[]): Promise<Rig> {
  const chatPage = await startChatPage()
  const config = await loadStackConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY, ...(await freeStackPortsEnv()) })
  const kept = await startKeptStack(config, {
    ANTHROPIC_API_KEY: MODEL_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test', ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces'),
    GATEWAY_CORS_ORIGINS: chatPage.origin, LOG_LEVEL: 'warn', ...UNLIMITED_GATEWAY,
  })
  return { kept, chatPage, chromium: await launchChatBrowser(), model, sentDeltasAtMs }
}

function openChat(rig: Rig, sessionId: string): Promise<Page> {
  return rig.chromium.open(rig.chatPage.url(rig.kept.stack.gatewayUrl, API_KEY, sessionId))
}

/** One trial: a prompt in a fresh page; the model server's first text delta to the page's first text (ms). */
async function firstTokenToScreen(rig: Rig, sessionId: string): Promise<number> {
  const page = await openChat(rig, sessionId)
  try {
    const sentBefore = rig.sentDeltasAtMs.length
    await sendPrompt(page, 'first token')
    await waitForAssistantText(page, text => text !== '', 'text')
    const shownAtMs = await firstTextAtMs(page)
    const sentAtMs = rig.sentDeltasAtMs[sentBefore]
    if (shownAtMs === undefined || sentAtMs === undefined) throw new Error(`trial ${sessionId}: no first-text or first-token time`)
    await pollUntil(async () => ((await chatStatus(page)) === 'ready' ? true : undefined), 30_000, `the end of ${sessionId}`)
    return shownAtMs - sentAtMs
  } finally {
    await page.close()
  }
}

/** One trial: a long streaming run; the Stop click to the session's run recorded `cancelled` (ms). */
async function clickToCancelled(rig: Rig, sessionId: string): Promise<number> {
  const page = await openChat(rig, sessionId)
  try {
    await sendPrompt(page, 'stop me')
    await waitForAssistantText(page, text => text.includes('word5'), 'word5')
    const clickedAtMs = wallMs()
    await page.getByTestId('stop').click()
    await pollUntil(async () => ((await runStatus(rig, sessionId)) === 'cancelled' ? true : undefined), 30_000, `${sessionId} cancelled`, 10)
    return wallMs() - clickedAtMs
  } finally {
    await page.close()
  }
}

async function runStatus(rig: Rig, sessionId: string): Promise<string | undefined> {
  const response = await fetch(`${rig.kept.stack.gatewayUrl}/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${API_KEY}` } })
  if (response.status !== 200) return undefined
  return ((await response.json()) as { runs: Array<{ status: string }> }).runs.at(-1)?.status
}

function addFigures(report: Report, firstToken: number[], cancel: number[]): void {
  const toScreen = summarize(firstToken)
  const toCancelled = summarize(cancel)
  report.figures.push(
    figureOf(SECTION, 'useChat in chromium: model server first token → text on screen', 'ms', toScreen, { target: { text: `median < ${FIRST_TOKEN_TARGET_MS} ms`, met: toScreen.median < FIRST_TOKEN_TARGET_MS } }),
    figureOf(SECTION, 'useChat in chromium: Stop click → run recorded cancelled', 'ms', toCancelled, { target: { text: `median < ${CANCEL_TARGET_MS} ms`, met: toCancelled.median < CANCEL_TARGET_MS } }),
  )
  report.notes.push(`§${SECTION} useChat in chromium: ${firstToken.length} trials each, fresh session and tab per trial; first token → screen p50 ${toScreen.median.toFixed(1)} / p95 ${toScreen.p95.toFixed(1)} ms; Stop click → cancelled p50 ${toCancelled.median.toFixed(0)} / p95 ${toCancelled.p95.toFixed(0)} ms (the session polled every 10 ms).`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report: Report = { figures: [], notes: [] }
  await measureChatBrowser(parseOptions(process.argv.slice(2)), report)
  console.log(renderTable(report))
}
