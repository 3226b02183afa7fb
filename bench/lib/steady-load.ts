/** One kind of request the load sends, every `intervalMs`; `send` resolves once answered and throws on a failure. */
export interface LoadStream {
  kind: string
  intervalMs: number
  send(index: number, signal: AbortSignal): Promise<void>
}

/** One answered (or failed) request: its kind, the phase it was sent in, and its latency. */
export interface LoadSample {
  kind: string
  phase: string
  latencyMs: number
  /** Why it failed (status, timeout, network error); absent when it succeeded. */
  error?: string
}

/** A running load: `phase` tags the requests sent from now on; `stop` ends it and waits for those in flight. */
export interface SteadyLoad {
  phase(name: string): void
  stop(): Promise<LoadSample[]>
}

/**
 * Sends each stream's requests on a fixed schedule (open loop: a slow answer never delays the next send, so a stall
 * shows as latency, not as fewer requests), each bounded by `timeoutMs` and tagged with the phase it was sent in.
 */
export function startSteadyLoad(streams: readonly LoadStream[], timeoutMs: number, firstPhase: string): SteadyLoad {
  const samples: LoadSample[] = []
  const inFlight = new Set<Promise<void>>()
  let current = firstPhase
  const fire = (stream: LoadStream, index: number): void => {
    const sent = timed(stream, index, current, timeoutMs).then(sample => { samples.push(sample) })
    inFlight.add(sent)
    void sent.finally(() => inFlight.delete(sent))
  }
  const timers = streams.map(stream => {
    let index = 0
    fire(stream, index++)
    return setInterval(() => { fire(stream, index++) }, stream.intervalMs)
  })
  return {
    phase: name => { current = name },
    stop: async () => {
      for (const timer of timers) clearInterval(timer)
      await Promise.all([...inFlight])
      return samples
    },
  }
}

async function timed(stream: LoadStream, index: number, phase: string, timeoutMs: number): Promise<LoadSample> {
  const started = performance.now()
  try {
    await stream.send(index, AbortSignal.timeout(timeoutMs))
    return { kind: stream.kind, phase, latencyMs: performance.now() - started }
  } catch (error) {
    const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : error.message) : String(error)
    return { kind: stream.kind, phase, latencyMs: performance.now() - started, error: reason }
  }
}
