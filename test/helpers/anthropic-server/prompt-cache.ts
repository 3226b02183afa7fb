import { createHash } from 'node:crypto'
import type { Json } from './types'

type Body = { [key: string]: Json }

/** Token counts the cache simulation computed for one request. */
export interface CacheAccounting {
  inputTokens: number
  cacheCreationTokens: number
  cacheCreation5mTokens: number
  cacheCreation1hTokens: number
  cacheReadTokens: number
}

interface Breakpoint { key: string; tokens: number; ttlMs: number }

const fiveMinutesMs = 5 * 60_000
const oneHourMs = 60 * 60_000

/** Rough token estimate used throughout the fake server: one token per four characters of JSON. */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value ?? '').length / 4)
}

function withoutCacheControl(segment: Json): Json {
  if (segment === null || typeof segment !== 'object' || Array.isArray(segment)) return segment
  const { cache_control: _ignored, ...rest } = segment
  return rest
}

function cacheControlOf(segment: Json): { ttl?: Json } | undefined {
  if (segment === null || typeof segment !== 'object' || Array.isArray(segment)) return undefined
  const control = segment['cache_control']
  return control !== null && typeof control === 'object' && !Array.isArray(control) ? control : undefined
}

function asArray(value: Json | undefined): Json[] {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value : [value]
}

/** The cacheable prefix in API order: tools, then system blocks, then every message's blocks. */
export function promptSegments(body: Body): Json[] {
  const segments: Json[] = [...asArray(body['tools']), ...asArray(body['system'])]
  for (const message of asArray(body['messages'])) {
    if (message !== null && typeof message === 'object' && !Array.isArray(message)) segments.push(...asArray(message['content']))
  }
  return segments
}

/** How many blocks of the request carry `cache_control` (the API allows at most 4). */
export function countBreakpoints(body: Body): number {
  return promptSegments(body).filter(segment => cacheControlOf(segment) !== undefined).length
}

/** True when some text block with `cache_control` is empty, which the API rejects. */
export function hasEmptyCachedText(body: Body): boolean {
  return promptSegments(body).some(segment => cacheControlOf(segment) !== undefined && typeof segment === 'object' && segment !== null && !Array.isArray(segment) && segment['type'] === 'text' && segment['text'] === '')
}

/**
 * A prefix-hash prompt cache: each `cache_control` breakpoint names the prefix up to it; a later request with the same
 * model and byte-identical prefix within the TTL reads it, otherwise the prefix up to the last breakpoint is written.
 */
export class PromptCache {
  readonly #entries = new Map<string, number>()

  constructor(private readonly minCacheableTokens: number) {}

  /** Accounts one request's input tokens and updates the cache. */
  account(body: Body, nowMs = Date.now()): CacheAccounting {
    const segments = promptSegments(body)
    const breakpoints = this.#breakpoints(String(body['model']), segments, body['cache_control'] !== undefined)
    const totalTokens = estimateTokens(segments.map(withoutCacheControl))
    const readTokens = Math.max(0, ...breakpoints.filter(point => (this.#entries.get(point.key) ?? 0) > nowMs).map(point => point.tokens))
    const last = breakpoints.at(-1)
    let writeTokens = 0
    if (last !== undefined && last.tokens > readTokens) writeTokens = last.tokens - readTokens
    for (const point of breakpoints) this.#entries.set(point.key, nowMs + point.ttlMs)
    const writesOneHour = last !== undefined && last.ttlMs === oneHourMs
    return {
      inputTokens: Math.max(0, totalTokens - readTokens - writeTokens),
      cacheCreationTokens: writeTokens,
      cacheCreation5mTokens: writesOneHour ? 0 : writeTokens,
      cacheCreation1hTokens: writesOneHour ? writeTokens : 0,
      cacheReadTokens: readTokens,
    }
  }

  #breakpoints(model: string, segments: Json[], automatic: boolean): Breakpoint[] {
    const points: Breakpoint[] = []
    const hash = createHash('sha256').update(model)
    let characters = 0
    segments.forEach((segment, index) => {
      const text = JSON.stringify(withoutCacheControl(segment))
      hash.update(text)
      characters += text.length
      const control = cacheControlOf(segment) ?? (automatic && index === segments.length - 1 ? {} : undefined)
      const tokens = Math.ceil(characters / 4)
      if (control === undefined || tokens < this.minCacheableTokens) return
      points.push({ key: hash.copy().digest('hex'), tokens, ttlMs: control.ttl === '1h' ? oneHourMs : fiveMinutesMs })
    })
    return points
  }
}
