import type { LogMetadata } from '@restatedev/restate-sdk'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { logLevelFrom, restateLogger } from '../../services/restate-logger'

// The SDK's enums are types only: their string values stand in.
const context = { invocationId: 'inv_1abc', invocationTarget: 'session/tenant~s1/run' } as LogMetadata['context']
const meta = (source: 'JOURNAL' | 'USER', level: 'info' | 'warn', replaying = false): LogMetadata => ({ source, level, replaying, context }) as unknown as LogMetadata

/** The lines `restateLogger(level)` prints for each call, as `LEVEL: message`. */
function printed(level: string, calls: [LogMetadata, string][]): string[] {
  const lines: string[] = []
  const keep = (...parts: unknown[]): void => { lines.push(`${String(parts[0]).split(' ').at(-1)} ${parts.slice(1).join(' ')}`) }
  vi.spyOn(console, 'log').mockImplementation(keep)
  vi.spyOn(console, 'error').mockImplementation(keep)
  const logger = restateLogger(logLevelFrom(level))
  for (const [metadata, message] of calls) logger(metadata, message)
  return lines
}

afterEach(() => { vi.restoreAllMocks() })

const PROMPT_LIFE: [LogMetadata, string][] = [
  [meta('JOURNAL', 'info'), 'Starting invocation.'],
  [meta('JOURNAL', 'info'), 'Invocation suspended'],
  [meta('JOURNAL', 'info'), 'Replaying invocation.'],
  [meta('JOURNAL', 'info'), 'Invocation completed successfully.'],
  [meta('JOURNAL', 'warn'), 'Error when processing the invocation.'],
  [meta('USER', 'info'), 'a handler line'],
  [meta('USER', 'info', true), 'a handler line, replayed'],
]

describe('restateLogger', () => {
  it('at info: the SDK routine lines of an invocation stay quiet; a resume, warnings and handler lines show', () => {
    expect(printed('info', PROMPT_LIFE)).toEqual(['INFO: Replaying invocation.', 'WARN: Error when processing the invocation.', 'INFO: a handler line'])
  })

  it('at debug: every line but the replayed handler line', () => {
    expect(printed('debug', PROMPT_LIFE)).toHaveLength(6)
  })

  it('at warn and silent: warnings only, then nothing', () => {
    expect(printed('WARN', PROMPT_LIFE)).toEqual(['WARN: Error when processing the invocation.'])
    expect(printed('silent', PROMPT_LIFE)).toEqual([])
  })

  it('reads an unset or unknown level as info', () => {
    expect(logLevelFrom(undefined)).toBe('info')
    expect(logLevelFrom('loud')).toBe('info')
    expect(logLevelFrom(' Debug ')).toBe('debug')
  })
})
