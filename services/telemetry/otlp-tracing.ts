import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator } from '@opentelemetry/sdk-trace-base'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import type { SpanRecord, Tracing } from './span-record'
import type { TelemetryConfig } from './telemetry-config'

/** Draws random ids, except the ids the next `startSpan` is told to take (a root span's trace, an `invoke_agent` span's id). */
class PresetIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator()
  nextTraceId: string | undefined
  nextSpanId: string | undefined
  generateTraceId(): string { return this.nextTraceId ?? this.random.generateTraceId() }
  generateSpanId(): string { return this.nextSpanId ?? this.random.generateSpanId() }
}

/**
 * Exports spans over OTLP/HTTP (JSON) to `config.tracesUrl`, batched (`config.scheduleDelayMs`). Its own provider,
 * never registered globally: nothing else in the process is traced through it. Export failures are OpenTelemetry's
 * to log; they never reach a run.
 */
export function createOtlpTracing(config: TelemetryConfig): Tracing {
  const ids = new PresetIdGenerator()
  const exporter = new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.scheduleDelayMs })],
  })
  const tracer = provider.getTracer('zidane')
  return {
    emit(record: SpanRecord): void {
      try {
        const context = record.parentSpanId === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true })
        ids.nextTraceId = record.traceId
        ids.nextSpanId = record.spanId
        let span
        try {
          span = tracer.startSpan(record.name, { kind: SpanKind.INTERNAL, startTime: record.startMs, attributes: record.attributes }, context)
        } finally {
          ids.nextTraceId = undefined
          ids.nextSpanId = undefined
        }
        if (record.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: record.error })
        span.end(record.endMs)
      } catch (error) {
        console.warn(`[traces] a span was dropped: ${error instanceof Error ? error.message : String(error)}`)
      }
    },
    flush: () => provider.forceFlush().catch(() => undefined),
  }
}
