import type { FastifyRequest } from 'fastify'
import type { GatewayConfig } from './config'
import { GatewayError } from './errors'
import type { RateLimiter } from './tenant-limits'
import { createKeyRing, OPEN_TENANT } from './tenancy'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's tenant, set by the auth hook; empty when the request was authorized by an answer token. */
    tenant: string
  }
}

/** The gateway's authentication: which requests carry a valid API key, and whose tenant they are. */
export interface GatewayAuth {
  /** Sets `request.tenant` or throws 401 `unauthorized`. Open mode lets everyone in as tenant `open`. */
  authenticate(request: FastifyRequest): void
  /** {@link GatewayAuth.authenticate} as an `onRequest` hook. */
  requireApiKey: (request: FastifyRequest) => Promise<void>
}

const BEARER = /^Bearer +(\S+) *$/i

/** Builds {@link GatewayAuth} (keys compared in constant time); each authorized request spends one of its tenant's rate tokens. */
export function createAuth(config: Pick<GatewayConfig, 'apiKeys' | 'open'>, rateLimiter: RateLimiter): GatewayAuth {
  const ring = createKeyRing(config.apiKeys)
  const tenantOf = (request: FastifyRequest): string => {
    if (config.open) return OPEN_TENANT
    const header = request.headers.authorization
    if (header === undefined) throw new GatewayError('unauthorized', 'missing Authorization: Bearer <api key> header')
    const key = BEARER.exec(header)?.[1]
    if (key === undefined) throw new GatewayError('unauthorized', 'the Authorization header must be "Bearer <api key>"')
    const tenant = ring.tenantFor(key)
    if (tenant === undefined) throw new GatewayError('unauthorized', 'unknown API key')
    return tenant
  }
  const authenticate = (request: FastifyRequest): void => {
    request.tenant = tenantOf(request)
    rateLimiter.take(request.tenant)
  }
  return { authenticate, requireApiKey: async (request) => authenticate(request) }
}
