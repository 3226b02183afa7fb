import * as restate from '@restatedev/restate-sdk'
import { describe, expect, it } from 'vitest'
import { ConfigurationError, ProviderError, SessionError } from 'zidane'
import { handlerEnding, toRestateError, withErrorBoundary } from '../../services/handler-boundary'
import type { HandlerEnding } from '../../services/handler-boundary'

/** The services' one error boundary, with the real SDK's error classes. */
describe('handler error boundary', () => {
  it('makes errors no retry can fix terminal, with their code', () => {
    for (const error of [new SessionError('schema 9 is newer', 'session_schema_newer'), new ConfigurationError('bad option', 'config_invalid'), new SessionError('busy', 'session_busy')]) {
      const mapped = toRestateError(error)
      expect(mapped).toBeInstanceOf(restate.TerminalError)
      expect((mapped as restate.TerminalError).metadata).toEqual({ code: error.code })
      expect((mapped as restate.TerminalError).message).toBe(`${error.code}: ${error.message}`)
    }
  })

  it('keeps transient failures retryable and passes Restate errors through untouched', () => {
    const transient = new ProviderError('overloaded', { code: 'provider_overloaded', retryable: true })
    expect(toRestateError(transient)).toBe(transient)
    const plain = new Error('socket hang up')
    expect(toRestateError(plain)).toBe(plain)
    const cancelled = new restate.CancelledError()
    expect(toRestateError(cancelled)).toBe(cancelled)
    expect(handlerEnding(cancelled)).toEqual({ kind: 'cancelled' })
    expect(handlerEnding(plain)).toBeUndefined()
  })

  it('records an ending before rethrowing, and never lets a failing record hide the error', async () => {
    const endings: HandlerEnding[] = []
    const failure = new SessionError('corrupt', 'session_corrupt')
    await expect(withErrorBoundary(async () => { throw failure }, async ending => { endings.push(ending) })).rejects.toBeInstanceOf(restate.TerminalError)
    expect(endings).toEqual([{ kind: 'failed', code: 'session_corrupt', reason: 'session_corrupt: corrupt' }])
    await expect(withErrorBoundary(async () => { throw failure }, async () => { throw new Error('state gone') })).rejects.toBeInstanceOf(restate.TerminalError)
    const retryable = new Error('try again')
    await expect(withErrorBoundary(async () => { throw retryable }, async ending => { endings.push(ending) })).rejects.toBe(retryable)
    expect(endings).toHaveLength(1)
  })
})
