/** Settings of the traces the services export (docs/traces.md), read from the standard OpenTelemetry variables. */
export interface TelemetryConfig {
  /** Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  tracesUrl: string
  /** `service.name` of the spans' resource (`OTEL_SERVICE_NAME`, default `zidane-services`). */
  serviceName: string
  /** Longest time a finished span waits in the batch before it is sent (`OTEL_BSP_SCHEDULE_DELAY`, default 5000 ms). */
  scheduleDelayMs: number
  /** Headers of every export request (`OTEL_EXPORTER_OTLP_HEADERS` / `_TRACES_HEADERS`: `key=value,key=value`). */
  headers: Record<string, string>
}

/** Default of `scheduleDelayMs`: OpenTelemetry's own. */
export const DEFAULT_SCHEDULE_DELAY_MS = 5_000

/**
 * Reads `TelemetryConfig` from `env`; undefined (no traces, no cost) when neither endpoint is set, or when
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` says so.
 */
export function loadTelemetryConfig(env: NodeJS.ProcessEnv): TelemetryConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined)
  if (!tracesUrl) return undefined
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY)
  return {
    tracesUrl,
    serviceName: env.OTEL_SERVICE_NAME || 'zidane-services',
    scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY && Number.isFinite(delay) && delay >= 0 ? delay : DEFAULT_SCHEDULE_DELAY_MS,
    headers: { ...headersFrom(env.OTEL_EXPORTER_OTLP_HEADERS), ...headersFrom(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
  }
}

/** `key=value,key=value` (values URL-encoded, as the OpenTelemetry specification writes them). */
function headersFrom(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const pair of (value ?? '').split(',')) {
    const at = pair.indexOf('=')
    if (at <= 0) continue
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return headers
}
