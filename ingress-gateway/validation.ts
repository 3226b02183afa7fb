import { Ajv, type Options } from 'ajv'
import type { FastifyInstance } from 'fastify'

/**
 * Installs schema validation with two Ajv instances. Bodies are checked strictly: no type coercion and no silent
 * removal of unknown properties (fastify's defaults would turn `123` into `"123"` and drop extra fields). Params,
 * querystring and headers are strings on the wire, so there types are coerced (`?wait=true` becomes a boolean).
 */
export function installValidation(app: FastifyInstance): void {
  const shared: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: true }
  const strictAjv = new Ajv({ ...shared, coerceTypes: false })
  const coercingAjv = new Ajv({ ...shared, coerceTypes: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema))
}
