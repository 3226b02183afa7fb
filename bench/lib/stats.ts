/** Summary of a sample: the median, the 95th and 99th percentiles, and how many values it holds. */
export interface Summary {
  median: number
  p95: number
  p99: number
  runs: number
}

/** The `fraction` quantile of `values` (nearest rank on the sorted copy); NaN for an empty sample. */
export function quantile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((left, right) => left - right)
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))
  return sorted[index] as number
}

/** Median, p95, p99 and count of `values`. */
export function summarize(values: readonly number[]): Summary {
  return { median: quantile(values, 0.5), p95: quantile(values, 0.95), p99: quantile(values, 0.99), runs: values.length }
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export function nowMs(): number {
  return performance.now()
}

/** Resolves after `ms` milliseconds. */
export function sleepMs(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function pollUntil<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await Promise.resolve(check()).catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleepMs(intervalMs)
  }
}
