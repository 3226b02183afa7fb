import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import type { JsonObject } from '../json'
import type { ToolDef } from '../tools/tool'

const ajv = new Ajv({ allErrors: true, strict: false })
const compiled = new WeakMap<ToolDef, ValidateFunction>()

/** Validates a call's input against its tool's JSON schema; returns a clear message for the model, or `undefined` when valid. */
export function validateToolInput(tool: ToolDef, input: JsonObject): string | undefined {
  let validate = compiled.get(tool)
  if (!validate) {
    validate = ajv.compile(tool.spec.inputSchema)
    compiled.set(tool, validate)
  }
  if (validate(input)) return undefined
  const problems = (validate.errors ?? []).map(error => `${error.instancePath || '(input)'} ${error.message ?? 'is invalid'}`)
  return `Invalid input for tool ${tool.spec.name}: ${problems.join('; ')}`
}
