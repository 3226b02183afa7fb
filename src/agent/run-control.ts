/** The abort and suspend switches of one run: the model stream stops at once, tools get a grace period on suspend. */
export class RunControl {
  private readonly abortController = new AbortController()
  private readonly modelController = new AbortController()
  private readonly toolController = new AbortController()
  private suspending = false
  private graceTimer: NodeJS.Timeout | undefined
  readonly modelSignal: AbortSignal
  readonly toolSignal: AbortSignal

  constructor(external?: AbortSignal) {
    const base = external ? [external, this.abortController.signal] : [this.abortController.signal]
    this.modelSignal = AbortSignal.any([...base, this.modelController.signal])
    this.toolSignal = AbortSignal.any([...base, this.toolController.signal])
  }

  /** Ends the run for good: model and tools stop now. */
  abort(reason?: string): void {
    this.abortController.abort(reason ?? 'aborted')
  }

  /** Stops the model at once, lets running tools finish for `graceMs`, then stops them; no new tool call starts. */
  suspend(graceMs: number): void {
    this.suspending = true
    this.modelController.abort('suspended')
    this.graceTimer = setTimeout(() => this.toolController.abort('suspended'), graceMs)
  }

  get isSuspending(): boolean { return this.suspending }
  get isAborted(): boolean { return this.abortController.signal.aborted || (this.modelSignal.aborted && !this.suspending) }

  /** Clears timers once the run ended. */
  dispose(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer)
  }
}
