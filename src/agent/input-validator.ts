import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import type { JsonObject } from '../json'
import type { ToolDef } from '../tools/tool'

/** Distinct input schemas whose validators are kept; past it the oldest is compiled again when next needed. */
const MAX_SCHEMAS = 1_000

/** Validates tool inputs against their JSON schemas (see {@link createToolInputValidator}). */
export interface ToolInputValidator {
  /** A clear message for the model when `input` does not match `tool`'s schema, or `undefined` when it does. */
  validate(tool: ToolDef, input: JsonObject): string | undefined
  /** Validators kept now (distinct schemas), for tests. */
  size(): number
}

/**
 * A validator that compiles each distinct input schema once. Tools are often made anew for every run (the services
 * build a run's tools per invocation), so validators are kept by the schema's content, at most {@link MAX_SCHEMAS},
 * and Ajv is told to forget each schema object it compiled: it would otherwise keep every one for good (a leak of one
 * schema per run), and compiling a second object with the same `$id` would throw. A schema that names an `$id` anywhere
 * (an MCP server's may, nested too, which `removeSchema` does not forget) is compiled in an Ajv of its own: one tool's
 * ids never clash with another's, and they go with its validator.
 */
export function createToolInputValidator(ajv: Ajv = createAjv()): ToolInputValidator {
  const byTool = new WeakMap<ToolDef, ValidateFunction>()
  const byContent = new Map<string, ValidateFunction>()
  const validatorOf = (tool: ToolDef): ValidateFunction => {
    const known = byTool.get(tool)
    if (known) return known
    const key = JSON.stringify(tool.spec.inputSchema)
    let validate = byContent.get(key)
    if (!validate) {
      validate = key.includes('"$id"') ? createAjv().compile(tool.spec.inputSchema) : compileAndForget(ajv, tool.spec.inputSchema)
      byContent.set(key, validate)
      if (byContent.size > MAX_SCHEMAS) byContent.delete(byContent.keys().next().value as string)
    }
    byTool.set(tool, validate)
    return validate
  }
  return {
    validate(tool, input) {
      const validate = validatorOf(tool)
      if (validate(input)) return undefined
      const problems = (validate.errors ?? []).map(error => `${error.instancePath || '(input)'} ${error.message ?? 'is invalid'}`)
      return `Invalid input for tool ${tool.spec.name}: ${problems.join('; ')}`
    },
    size: () => byContent.size,
  }
}

function createAjv(): Ajv {
  return new Ajv({ allErrors: true, strict: false })
}

/** Compiles `schema` in the shared `ajv`, which then forgets the schema object. */
function compileAndForget(ajv: Ajv, schema: ToolDef['spec']['inputSchema']): ValidateFunction {
  try {
    return ajv.compile(schema)
  } finally {
    ajv.removeSchema(schema)
  }
}

const processValidator = createToolInputValidator()

/** Validates a call's input against its tool's JSON schema; returns a clear message for the model, or `undefined` when valid. */
export function validateToolInput(tool: ToolDef, input: JsonObject): string | undefined {
  return processValidator.validate(tool, input)
}
