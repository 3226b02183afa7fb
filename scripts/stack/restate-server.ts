import { isHealthy, waitUntil } from './wait'

/** The loopback ports a restate-server listens on. */
export interface RestatePorts {
  adminPort: number
  ingressPort: number
  fabricPort: number
}

/** Environment that binds a restate-server to `ports` on 127.0.0.1 (TCP, not unix sockets). */
export function restateListenEnv(ports: RestatePorts): Record<string, string> {
  return {
    RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${ports.adminPort}`,
    RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ports.ingressPort}`,
    RESTATE_BIND_ADDRESS: `127.0.0.1:${ports.fabricPort}`,
    RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${ports.fabricPort}/`,
    RESTATE_LISTEN_MODE: 'tcp',
  }
}

/** The admin and ingress base URLs of a restate-server on `ports`. */
export function restateUrls(ports: Pick<RestatePorts, 'adminPort' | 'ingressPort'>): { adminUrl: string; ingressUrl: string } {
  return { adminUrl: `http://127.0.0.1:${ports.adminPort}`, ingressUrl: `http://127.0.0.1:${ports.ingressPort}` }
}

/** Resolves once the admin API and then the ingress answer their health checks; throws after `timeoutMs` each. */
export async function waitForRestate(urls: { adminUrl: string; ingressUrl: string }, timeoutMs: number, intervalMs?: number): Promise<void> {
  await waitUntil(() => isHealthy(`${urls.adminUrl}/health`), timeoutMs, 'the Restate admin API', intervalMs)
  await waitUntil(() => isHealthy(`${urls.ingressUrl}/restate/health`), timeoutMs, 'the Restate ingress', intervalMs)
}
