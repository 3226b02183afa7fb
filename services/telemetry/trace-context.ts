import { createHash } from 'node:crypto'

/** Where one agent invocation's spans go: its trace, the parent of its `invoke_agent` span, and that span's id. */
export interface RunTraceContext {
  /** 32 hex digits: Restate's trace of the invocation when Restate propagates one, else derived from the invocation id. */
  traceId: string
  /** The span `invoke_agent` hangs under: this attempt's Restate span (from `traceparent`), if any. */
  parentSpanId: string | undefined
  /** The `invoke_agent` span's own id, derived from the invocation id: every attempt's spans name the same parent. */
  agentSpanId: string
}

/** The parts of a Restate request the trace context is read from. */
export interface TracedRequest {
  id: string
  attemptHeaders: ReadonlyMap<string, string | string[] | undefined>
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/

/**
 * The trace context of an invocation. Restate sends a W3C `traceparent` with each attempt when its server exports
 * traces (the trace stays the same across attempts and reaches the invocations it calls; the span is the attempt's):
 * then the spans join Restate's trace. Otherwise the trace id is derived from the invocation id. Either way it is the
 * same on every attempt, so it may land in durable state.
 */
export function runTraceContext(request: TracedRequest): RunTraceContext {
  const header = request.attemptHeaders.get('traceparent')
  const parsed = TRACEPARENT.exec((Array.isArray(header) ? header[0] : header)?.trim().toLowerCase() ?? '')
  const traceId = parsed?.[1] && !/^0+$/.test(parsed[1]) ? parsed[1] : hexDigest(`zidane-trace:${request.id}`, 32)
  return { traceId, parentSpanId: parsed && traceId === parsed[1] ? parsed[2] : undefined, agentSpanId: hexDigest(`zidane-agent-span:${request.id}`, 16) }
}

function hexDigest(text: string, digits: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, digits)
}
