import type { JsonObject } from '../../json'
import { ToolError } from '../tool'

/** Reads a required string field of a tool's input; throws `ToolError` `invalid_input` when it is missing or not a string. */
export function requiredString(input: JsonObject, key: string): string {
  const value = input[key]
  if (typeof value !== 'string') throw invalidInput(`"${key}" must be a string`)
  return value
}

/** Reads an optional string field; `undefined` when absent. */
export function optionalString(input: JsonObject, key: string): string | undefined {
  const value = input[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw invalidInput(`"${key}" must be a string`)
  return value
}

/** Reads an optional integer field within `[minimum, maximum]`; `undefined` when absent. */
export function optionalInteger(input: JsonObject, key: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = input[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
    throw invalidInput(`"${key}" must be an integer between ${minimum} and ${maximum}`)
  }
  return value
}

/** Reads an optional boolean field; `undefined` when absent. */
export function optionalBoolean(input: JsonObject, key: string): boolean | undefined {
  const value = input[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw invalidInput(`"${key}" must be a boolean`)
  return value
}

function invalidInput(message: string): ToolError {
  return new ToolError(`Invalid input: ${message}.`, 'invalid_input')
}
