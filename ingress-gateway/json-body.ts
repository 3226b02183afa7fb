import { Ajv, type Options } from 'ajv'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { GatewayError, unsupportedMediaType } from './errors'

/** How deeply a request body may nest arrays and objects; deeper bodies could not be serialized on to Restate. */
const MAX_JSON_DEPTH = 64

/** Decodes strictly: malformed UTF-8 throws instead of becoming U+FFFD. A leading BOM is dropped. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Bodies are validated strictly (fastify's defaults would coerce `123` to `"123"` and drop unknown fields); params,
 * querystring and headers are strings on the wire, so there types are coerced (`?wait=true` becomes a boolean).
 */
export function installValidation(app: FastifyInstance): void {
  const shared: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: true }
  const strictAjv = new Ajv({ ...shared, coerceTypes: false })
  const coercingAjv = new Ajv({ ...shared, coerceTypes: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema))
}

/**
 * Only JSON in UTF-8: another type or charset gets 415, bytes that are not UTF-8 get 400. A whitespace-only body is no
 * body (bodiless POSTs work with any client). Too deep a body, or a `__proto__`/`constructor` key, gets 400.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = readableBody(request, body)
    if (text instanceof GatewayError) return done(text, undefined)
    if (/^[ \t\n\r]*$/.test(text)) return done(null, undefined)
    void parseJson(request, text, (error, parsed: unknown) => {
      // Valid for `JSON.parse` yet refused: the secure parser saw prototype poisoning.
      if (error !== null) done(attempt(() => JSON.parse(text)) === undefined ? error : new GatewayError('invalid_request', 'body must not contain a "__proto__" or "constructor" key'), undefined)
      else if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) done(new GatewayError('invalid_request', `body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined)
      else done(null, parsed)
    })
  })
}

function readableBody(request: FastifyRequest, body: Buffer | string): string | GatewayError {
  if (!declaresUtf8OrNoCharset(request.headers['content-type'])) return unsupportedMediaType(request)
  if (typeof body === 'string') return body
  return attempt(() => STRICT_UTF8.decode(body)) ?? new GatewayError('invalid_request', 'body is not valid UTF-8')
}

/** `fn()`, or undefined when it throws. */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn()
  } catch {
    return undefined
  }
}

/** Whether a content type's `charset`, if any, is `utf-8` (any case, quoted or not); without one JSON is UTF-8 (RFC 8259). */
function declaresUtf8OrNoCharset(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';').slice(1).every((parameter) => {
    const separator = parameter.indexOf('=')
    if (separator === -1 || parameter.slice(0, separator).trim().toLowerCase() !== 'charset') return true
    return parameter.slice(separator + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase() === 'utf-8'
  })
}

/** Whether `value` nests arrays and objects deeper than `maxDepth` levels (checked without recursion). */
function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue
    if (next.depth >= maxDepth) return true
    for (const child of Object.values(next.value)) stack.push({ value: child, depth: next.depth + 1 })
  }
  return false
}
