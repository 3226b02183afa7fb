import { chromium } from 'playwright-core'
import type { Browser, Page } from 'playwright-core'

/** Debian's chromium (CI installs the `chromium` package), or `CHROMIUM_PATH`: Playwright cannot download its browsers here. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** A headless chromium and every console error and uncaught page error of the pages it opened. */
export interface ChatBrowser {
  browser: Browser
  /** `[type] text (url)` of each console error and page error, in order. */
  errors: string[]
  /**
   * A new tab on `url`, its errors recorded, with the first-text probe (see {@link firstTextAtMs}) installed; resolves once
   * the page's resume request (`GET …/chat/stream`) was answered.
   */
  open(url: string): Promise<Page>
  close(): Promise<void>
}

/** Launches chromium headless. */
export async function launchChatBrowser(): Promise<ChatBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] })
  const errors: string[] = []
  return {
    browser,
    errors,
    open: async url => {
      const page = await browser.newPage()
      page.on('console', message => { if (message.type() === 'error') errors.push(`[console] ${message.text()} (${message.location().url})`) })
      page.on('pageerror', error => errors.push(`[pageerror] ${error.message}`))
      await page.addInitScript({ content: FIRST_TEXT_PROBE })
      // `resume: true` asks for the session's active run as the page mounts: a person types slower than that answer comes.
      const resumed = page.waitForResponse(response => new URL(response.url()).pathname.endsWith('/chat/stream'))
      await page.goto(url)
      await resumed
      return page
    },
    close: () => browser.close(),
  }
}

/**
 * Runs in the page before its scripts (plain JavaScript: this file is type-checked without the DOM): notes the
 * wall-clock time (`performance.timeOrigin + performance.now()`, the same clock as the test's) at which an assistant
 * message first shows text, on the mutation that put it there.
 */
const FIRST_TEXT_PROBE = `
  document.addEventListener('DOMContentLoaded', () => {
    const observer = new MutationObserver(() => {
      const text = document.querySelector('[data-role="assistant"] [data-testid="message-text"]')?.textContent ?? ''
      if (text === '') return
      window.firstTextAtMs = performance.timeOrigin + performance.now()
      observer.disconnect()
    })
    observer.observe(document.body, { childList: true, subtree: true, characterData: true })
  })
`

/** When the page first showed assistant text (wall clock, ms), or undefined if it has not yet. */
export function firstTextAtMs(page: Page): Promise<number | undefined> {
  return page.evaluate<number | undefined>('window.firstTextAtMs')
}

/** The text of the page's last assistant message (every text part, in order); '' when there is none. */
export async function assistantText(page: Page): Promise<string> {
  const messages = page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-text"]')
  return (await messages.count()) === 0 ? '' : ((await messages.last().textContent()) ?? '')
}

/** `useChat`'s status as the page shows it (`ready`, `submitted`, `streaming`, `error`). */
export async function chatStatus(page: Page): Promise<string> {
  return (await page.getByTestId('status').textContent()) ?? ''
}

/** Types `prompt` in the page's prompt box and sends it. */
export async function sendPrompt(page: Page, prompt: string): Promise<void> {
  await page.getByTestId('prompt').fill(prompt)
  await page.getByTestId('send').click()
}

/**
 * Waits (polling every 50 ms) until the last assistant message's text satisfies `ready`, and returns it; fails at once
 * when the page shows a chat error, with its text.
 */
export async function waitForAssistantText(page: Page, ready: (text: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const text = await assistantText(page)
    if (ready(text)) return text
    const error = page.getByTestId('error')
    if ((await error.count()) > 0) throw new Error(`the page shows an error while waiting for ${what}: ${await error.textContent()}`)
    if (Date.now() > deadline) throw new Error(`no ${what} on screen within ${timeoutMs} ms (text: ${JSON.stringify(text.slice(-200))})`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}
