import { createHash } from 'node:crypto'
import type { Json, JsonObject as Body } from './types'

/** Token counts the cache simulation computed for one request. */
export interface CacheAccounting {
  inputTokens: number
  cacheCreationTokens: number
  cacheCreation5mTokens: number
  cacheCreation1hTokens: number
  cacheReadTokens: number
}

const fiveMinutesMs = 5 * 60_000
const oneHourMs = 60 * 60_000

/** The request's `model` as a string (validation has already required it). */
export function modelOf(body: Body): string {
  const model = body['model']
  return typeof model === 'string' ? model : JSON.stringify(model)
}

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

/** How many block boundaries the API checks back from an explicit breakpoint for an earlier cache entry. */
export const lookbackBlocks = 20

interface Prefix { key: string; tokens: number; control: { ttl?: Json } | undefined }

/**
 * A prefix-hash prompt cache: each `cache_control` breakpoint names the prefix up to it. A later request with the same
 * model reads the longest byte-identical prefix cached within its TTL at a breakpoint or up to {@link lookbackBlocks}
 * boundaries before one; the prefix up to the last breakpoint is written beyond what was read.
 */
export class PromptCache {
  readonly #entries = new Map<string, number>()

  constructor(private readonly minCacheableTokens: number) {}

  /** Accounts one request's input tokens and updates the cache. */
  account(body: Body, nowMs = Date.now()): CacheAccounting {
    const segments = promptSegments(body)
    const prefixes = prefixesOf(modelOf(body), segments, body['cache_control'] !== undefined)
    const breakpoints = prefixes.map((prefix, index) => ({ prefix, index })).filter(({ prefix }) => prefix.control !== undefined && prefix.tokens >= this.minCacheableTokens)
    const totalTokens = prefixes.at(-1)?.tokens ?? 0
    const readTokens = Math.max(0, ...breakpoints.flatMap(({ index }) => prefixes.slice(Math.max(0, index - lookbackBlocks + 1), index + 1))
      .filter(prefix => (this.#entries.get(prefix.key) ?? 0) > nowMs).map(prefix => prefix.tokens))
    const last = breakpoints.at(-1)?.prefix
    const writeTokens = last !== undefined && last.tokens > readTokens ? last.tokens - readTokens : 0
    for (const { prefix } of breakpoints) this.#entries.set(prefix.key, nowMs + ttlMsOf(prefix.control))
    const writesOneHour = last !== undefined && ttlMsOf(last.control) === oneHourMs
    return {
      inputTokens: Math.max(0, totalTokens - readTokens - writeTokens),
      cacheCreationTokens: writeTokens,
      cacheCreation5mTokens: writesOneHour ? 0 : writeTokens,
      cacheCreation1hTokens: writesOneHour ? writeTokens : 0,
      cacheReadTokens: readTokens,
    }
  }
}

function ttlMsOf(control: { ttl?: Json } | undefined): number {
  return control?.ttl === '1h' ? oneHourMs : fiveMinutesMs
}

/** The hash and estimated size of the prompt up to each segment; top-level `cache_control` marks the last one. */
function prefixesOf(model: string, segments: Json[], automatic: boolean): Prefix[] {
  const hash = createHash('sha256').update(model)
  let characters = 0
  return segments.map((segment, index) => {
    const text = JSON.stringify(withoutCacheControl(segment))
    hash.update(text)
    characters += text.length
    const control = cacheControlOf(segment) ?? (automatic && index === segments.length - 1 ? {} : undefined)
    return { key: hash.copy().digest('hex'), tokens: Math.ceil(characters / 4), control }
  })
}
