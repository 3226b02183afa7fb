import { join } from 'node:path'
import { startEgressProxy } from './egress-proxy'
import type { EgressProxy, EgressProxyOptions } from './egress-proxy'
import { createPrivateTempFolder } from './private-temp-folder'

/** Where the proxy's unix socket appears inside the sandbox. */
const SOCKET_INSIDE = '/run/zidane/egress.sock'
/** The port inside the sandbox's own network namespace where `socat` bridges TCP to that socket. */
const PROXY_PORT = 3128
const PROXY_URL = `http://127.0.0.1:${PROXY_PORT}`
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']

/** Outbound network of a sandbox limited to allowed domains: the `bwrap` arguments and the shell lines that set it up. */
export interface SandboxEgress {
  /** Binds the proxy's socket into the sandbox and points the proxy variables at the bridge (starts the proxy once). */
  bwrapArguments(): string[]
  /** Shell lines run inside the sandbox before the command: start the bridge and wait until it listens. */
  readonly bridgeScript: string
}

/**
 * Egress through our filtering proxy (`startEgressProxy`): the sandbox keeps its own network namespace (no route
 * out, no host loopback); the proxy listens on a unix socket outside, bound into the sandbox, and `socat` inside
 * bridges `127.0.0.1:3128` to it, where `HTTP_PROXY`/`HTTPS_PROXY` point. The proxy starts on first use, in a
 * private folder removed when the process exits. Needs `socat` (the command fails with exit code 126 without it).
 */
export function sandboxEgress(options: Omit<EgressProxyOptions, 'socketPath'>): SandboxEgress {
  let proxy: EgressProxy | undefined
  return {
    bwrapArguments: () => {
      proxy ??= startInPrivateFolder(options)
      const variables = [...PROXY_VARIABLES.map(name => [name, PROXY_URL]), ['NODE_USE_ENV_PROXY', '1']]
      return ['--bind', proxy.socketPath, SOCKET_INSIDE, ...variables.flatMap(([name, value]) => ['--setenv', name as string, value as string])]
    },
    bridgeScript: [
      'command -v socat >/dev/null || { echo "zidane sandbox: the allowed domains need socat, which is not installed" >&2; exit 126; }',
      `socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SOCKET_INSIDE} 2>/dev/null &`,
      `for i in $(seq 1 300); do (: </dev/tcp/127.0.0.1/${PROXY_PORT}) 2>/dev/null && break; sleep 0.01; done`,
    ].join('\n'),
  }
}

function startInPrivateFolder(options: Omit<EgressProxyOptions, 'socketPath'>): EgressProxy {
  return startEgressProxy({ ...options, socketPath: join(createPrivateTempFolder('zidane-egress-'), 'proxy.sock') })
}

