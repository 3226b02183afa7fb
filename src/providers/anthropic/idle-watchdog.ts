/**
 * Fires `onIdle` once when `touch` has not been called for `idleMs`. The SDK's own timeout stops at the response
 * headers, so a stream that stalls afterwards would otherwise hang forever.
 */
export class IdleWatchdog {
  #timer: NodeJS.Timeout | undefined
  #fired = false

  constructor(private readonly idleMs: number, private readonly onIdle: () => void) {}

  /** True once the watchdog has fired. */
  get fired(): boolean {
    return this.#fired
  }

  /** Records activity and (re)arms the timer. */
  touch(): void {
    this.stop()
    if (this.#fired) return
    this.#timer = setTimeout(() => {
      this.#fired = true
      this.onIdle()
    }, this.idleMs)
  }

  /** Disarms the timer. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
