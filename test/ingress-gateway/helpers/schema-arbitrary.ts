import fc, { type Arbitrary } from 'fast-check'

/** The JSON schema subset the gateway's route schemas use. */
export interface JsonSchemaLike {
  type?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  enum?: readonly unknown[]
  required?: readonly string[]
  properties?: Record<string, JsonSchemaLike>
  items?: JsonSchemaLike
  maxItems?: number
  uniqueItems?: boolean
  /** `if`/`else` with `required` only (exactly one of two fields): values are drawn from the `else` branch. */
  if?: { required?: readonly string[] }
  else?: { required?: readonly string[] }
  dependencies?: Record<string, readonly string[]>
}

/** Characters a header value may carry on the wire (latin-1 without controls), so non-ASCII values are tried too. */
const headerCharacter = fc.integer({ min: 0x20, max: 0xff }).filter((code) => code !== 0x7f).map((code) => String.fromCharCode(code))

/** Any text, any JSON: what a careless or hostile client may send where `schema` is expected. */
export function hostileValue(): Arbitrary<unknown> {
  return fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.jsonValue(), fc.constantFrom('', '.', '..', '%', '%zz', '/', 'null', '-1', '1e309', 'true'))
}

/** Values that match `schema` (the happy path), drawn from its types, patterns and bounds. */
export function validValue(schema: JsonSchemaLike): Arbitrary<unknown> {
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum)
  switch (schema.type) {
    case 'string':
      if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern))
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) })
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 })
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'boolean':
      return fc.boolean()
    case 'object':
      return validObject(schema)
    case 'array': {
      const items = validValue(schema.items ?? {})
      const maxLength = Math.min(schema.maxItems ?? 5, 5)
      return schema.uniqueItems === true ? fc.uniqueArray(items, { maxLength, selector: (item) => JSON.stringify(item) }) : fc.array(items, { maxLength })
    }
    default:
      return fc.jsonValue()
  }
}

function validObject(schema: JsonSchemaLike): Arbitrary<unknown> {
  // The `else` branch of an if/then/else: its required fields, without the `if` fields and the fields needing them.
  const excluded = new Set(schema.if?.required ?? [])
  for (const [name, needs] of Object.entries(schema.dependencies ?? {})) if (needs.some((need) => excluded.has(need))) excluded.add(name)
  const record: Record<string, Arbitrary<unknown>> = {}
  for (const [name, property] of Object.entries(schema.properties ?? {})) if (!excluded.has(name)) record[name] = validValue(property)
  return fc.record(record, { requiredKeys: [...(schema.required ?? []), ...(schema.else?.required ?? [])] })
}

/** Mostly valid values, sometimes hostile ones, sometimes none at all (`undefined`). */
export function fuzzedValue(schema: JsonSchemaLike): Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: validValue(schema) }, { weight: 2, arbitrary: hostileValue() }, { weight: 1, arbitrary: fc.constant(undefined) })
}

/** A header value for `schema`: valid, or any latin-1 text, or absent. */
export function fuzzedHeader(schema: JsonSchemaLike): Arbitrary<string | undefined> {
  const valid = validValue(schema).map((value) => (typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)))
  const edgy = fc.constantFrom('clé', 'ü', '\u00a0', ' x ', 'a'.repeat(201))
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: fc.string({ unit: headerCharacter, maxLength: 300 }) }, { weight: 1, arbitrary: edgy }, { weight: 1, arbitrary: fc.constant(undefined) })
}
