/** A value of a span attribute, as OpenTelemetry takes it. */
export type SpanAttributeValue = string | number | boolean | string[]

/** One finished span, described independently of any SDK: what the mapping from the agent's hooks produces. */
export interface SpanRecord {
  name: string
  traceId: string
  /** The span's own id (16 hex digits) when it must be known in advance; else the exporter draws one. */
  spanId?: string
  parentSpanId?: string
  startMs: number
  endMs: number
  attributes: Record<string, SpanAttributeValue>
  /** Set when the operation failed: the span's status is then ERROR with this message. */
  error?: string
}

/** Where finished spans go (the OTLP exporter in production, an array in tests). Never throws; never waits. */
export interface SpanSink {
  emit(span: SpanRecord): void
}

/** The span sink of the services, with what their shutdown needs. */
export interface Tracing extends SpanSink {
  /** Sends what is batched; resolves once sent (or failed). */
  flush: () => Promise<void>
}
