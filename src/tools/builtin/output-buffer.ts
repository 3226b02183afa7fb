/** Collects a stream's bytes up to a cap, keeping the head and the tail. */
export interface OutputBuffer {
  append(chunk: Buffer): void
  /** The text collected; past the cap, head and tail joined by a `[… N bytes omitted …]` marker. */
  text(): string
  readonly totalBytes: number
}

/** Creates an `OutputBuffer` keeping at most `maxBytes` bytes: the first half and the last half of the output. */
export function createOutputBuffer(maxBytes: number): OutputBuffer {
  const headLimit = Math.floor(maxBytes / 2)
  const tailLimit = maxBytes - headLimit
  const head: Buffer[] = []
  let headBytes = 0
  const tail: Buffer[] = []
  let tailBytes = 0
  let totalBytes = 0
  return {
    append(chunk) {
      totalBytes += chunk.length
      const toHead = Math.min(chunk.length, headLimit - headBytes)
      if (toHead > 0) { head.push(chunk.subarray(0, toHead)); headBytes += toHead }
      if (toHead === chunk.length) return
      tail.push(chunk.subarray(toHead))
      tailBytes += chunk.length - toHead
      // Drop whole leading chunks that the tail no longer needs, so memory stays bounded.
      while (tail.length > 1 && tailBytes - (tail[0]?.length ?? 0) >= tailLimit) tailBytes -= tail.shift()?.length ?? 0
    },
    text() {
      const headText = Buffer.concat(head)
      const tailBuffer = Buffer.concat(tail)
      const kept = tailBuffer.subarray(Math.max(0, tailBuffer.length - tailLimit))
      const omitted = totalBytes - headText.length - kept.length
      if (omitted === 0) return Buffer.concat([headText, kept]).toString('utf8')
      return `${headText.toString('utf8')}\n[… ${omitted} bytes omitted …]\n${kept.toString('utf8')}`
    },
    get totalBytes() { return totalBytes },
  }
}
