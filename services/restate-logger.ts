import type { LoggerTransport, LogMetadata } from '@restatedev/restate-sdk'

/** The levels `LOG_LEVEL` takes, quietest last; the gateway (pino) and the services read the same names. */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

/** A log level by name. */
export type LogLevel = (typeof LEVELS)[number]

/** The level `LOG_LEVEL` names (case-insensitive); `info` when unset, and when unknown rather than failing the start. */
export function logLevelFrom(value: string | undefined): LogLevel {
  const name = value?.trim().toLowerCase()
  return LEVELS.find(level => level === name) ?? 'info'
}

/**
 * The SDK's own lines about each invocation's life, logged at `info` by the SDK: at `debug` here, so a prompt (which
 * runs a dozen short invocations) logs nothing in the services at `info`. "Replaying invocation." stays at `info`: it
 * says a run resumed, after a wait or a crash, and the chaos checks read it.
 */
const ROUTINE_LINES = new Set(['Starting invocation.', 'Invocation completed successfully.', 'Invocation suspended'])

function rank(level: string): number {
  return LEVELS.indexOf(logLevelFrom(level))
}

/** The SDK exports its level and source enums as types only: their string values are compared here. */
function levelOf(meta: LogMetadata, message: unknown): string {
  return String(meta.source) === 'JOURNAL' && String(meta.level) === 'info' && typeof message === 'string' && ROUTINE_LINES.has(message) ? 'debug' : meta.level
}

/**
 * The Restate SDK's log transport for the services: the SDK's lines (format unchanged: `[restate][time][target][id]
 * LEVEL: message`) at `level` and above, the routine ones at `debug` (see {@link ROUTINE_LINES}); a handler's own
 * lines (`ctx.console`) are not repeated while its journal replays.
 */
export function restateLogger(level: LogLevel): LoggerTransport {
  const threshold = rank(level)
  return (meta, message?: unknown, ...rest: unknown[]) => {
    if (meta.replaying) return
    const effective = levelOf(meta, message)
    if (rank(effective) < threshold) return
    const context = meta.context ? `[${meta.context.invocationTarget}][${meta.context.invocationId}]` : ''
    // eslint-disable-next-line no-restricted-syntax -- a log line's wall time: printed, never journaled.
    const line = [`[restate][${new Date().toISOString()}]${context} ${meta.level.toUpperCase()}:`, message, ...rest]
    if (rank(effective) >= rank('warn')) console.error(...line)
    else console.log(...line)
  }
}
