/** One chunk of an AI SDK UI message stream (`data: {json}`), with when it arrived (`performance.now()`). */
export interface ReceivedChunk { atMs: number; chunk: { type: string; [field: string]: unknown } }

/** A UI message stream being read: its response status, the chunks so far, whether `[DONE]` came, and its end. */
export interface UiMessageReader {
  status: number
  chunks: ReceivedChunk[]
  /** Whether the stream sent its `data: [DONE]` terminator. */
  done(): boolean
  /** Resolves when the response body ends (or the reader is closed). */
  ended: Promise<void>
  close(): void
}

/** Reads the UI message stream `url` answers (e.g. `GET …/chat/stream`) in the background, chunk by chunk. */
export async function readUiMessageStream(url: string, headers: Record<string, string>): Promise<UiMessageReader> {
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  const chunks: ReceivedChunk[] = []
  let terminated = false
  const ended = (async () => {
    let buffer = ''
    const decoder = new TextDecoder()
    for await (const bytes of response.body ?? []) {
      buffer += decoder.decode(bytes as Uint8Array, { stream: true })
      const frames = buffer.split('\n\n')
      buffer = frames.pop() ?? ''
      for (const frame of frames) {
        const data = frame.split('\n').filter(line => line.startsWith('data:')).map(line => line.slice(5).trimStart()).join('\n')
        if (data === '[DONE]') terminated = true
        else if (data !== '') chunks.push({ atMs: performance.now(), chunk: JSON.parse(data) as ReceivedChunk['chunk'] })
      }
    }
  })().catch((error: unknown) => { if (!abort.signal.aborted) throw error })
  return { status: response.status, chunks, done: () => terminated, ended, close: () => abort.abort() }
}
