/** Polls `check` every `intervalMs` (default 100) until it resolves true, or throws after `timeoutMs` naming `what`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
}

/** True when `url` answers with a 2xx status. */
export async function isHealthy(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  return response.ok
}
