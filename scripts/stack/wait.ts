/** Polls `check` every 100 ms until it resolves true, or throws after `timeoutMs` naming `what`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
}

/** True when `url` answers with a 2xx status. */
export async function isHealthy(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  return response.ok
}
