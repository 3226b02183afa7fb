import { EventEmitter, once } from 'node:events'

/**
 * A single-consumer queue of items pushed by several producers (the durable log, the live deltas, the pending list)
 * and drained by one async iterator. Producers that can wait (the durable log) await {@link ItemQueue.roomFor} so a
 * slow consumer holds them back instead of growing the queue.
 */
export class ItemQueue<Item> {
  private items: Item[] = []
  private readonly signals = new EventEmitter().setMaxListeners(0)

  constructor(private readonly highWater: number) {}

  push(items: readonly Item[]): void {
    if (items.length === 0) return
    this.items.push(...items)
    this.signals.emit('pushed')
  }

  /** Resolves once the queue holds fewer than its high-water mark, or `signal` aborts. */
  async roomFor(signal: AbortSignal): Promise<void> {
    while (this.items.length >= this.highWater && !signal.aborted) await once(this.signals, 'drained', { signal }).catch(() => undefined)
  }

  /** Yields the items as they arrive until `signal` aborts. */
  async *drain(signal: AbortSignal): AsyncGenerator<Item> {
    while (!signal.aborted) {
      if (this.items.length === 0) {
        await once(this.signals, 'pushed', { signal }).catch(() => undefined)
        continue
      }
      const batch = this.items
      this.items = []
      this.signals.emit('drained')
      for (const item of batch) {
        if (signal.aborted) return
        yield item
      }
    }
  }
}
