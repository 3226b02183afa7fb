import type { ModelCatalog } from 'zidane/providers'
import { resolveModelName } from 'zidane/providers'
import { GatewayError } from './errors'

/**
 * Refuses a prompt's `model` that the deployment's catalog does not know, with 400 `unknown_model` naming the known
 * ones, before the run is admitted (the services would otherwise fail the run later). No catalog (a test's app): no check.
 */
export function checkModel(catalog: ModelCatalog | undefined, model: string | undefined): void {
  if (catalog === undefined || model === undefined) return
  const resolved = resolveModelName(catalog, model)
  if ('unknown' in resolved) throw new GatewayError('unknown_model', resolved.unknown)
}
