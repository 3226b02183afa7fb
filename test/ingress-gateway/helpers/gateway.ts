import type { FastifyInstance } from 'fastify'
import { buildGateway } from '../../../ingress-gateway/app'
import type { GatewayConfig } from '../../../ingress-gateway/config'

/** API keys of the test gateways. */
export const KEY_A = 'test-key-alpha-0123456789'
export const KEY_B = 'test-key-bravo-0123456789'

/** An address where nothing listens: any request that reaches "Restate" fails with 503 `restate_unavailable`. */
export const UNREACHABLE_RESTATE = 'http://127.0.0.1:1'

/** A gateway config for tests: two keys, Restate unreachable unless overridden. */
export function testConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    apiKeys: [KEY_A, KEY_B],
    open: false,
    restateIngressUrl: UNREACHABLE_RESTATE,
    restateAdminUrl: UNREACHABLE_RESTATE,
    port: 3000,
    host: '127.0.0.1',
    publicUrl: 'http://gateway.test',
    answerSecret: 'test-answer-secret-0123456789',
    bodyLimitBytes: 1024 * 1024,
    ...overrides,
  }
}

/** Builds a test gateway and readies it. */
export async function testGateway(overrides: Partial<GatewayConfig> = {}): Promise<FastifyInstance> {
  const app = await buildGateway(testConfig(overrides))
  await app.ready()
  return app
}

/** The `Authorization` header of a key. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}
