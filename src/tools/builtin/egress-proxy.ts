import { lookup } from 'node:dns/promises'
import { createServer, request } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { BlockList, connect, isIP } from 'node:net'
import type { Duplex } from 'node:stream'

/** Options of `startEgressProxy`. */
export interface EgressProxyOptions {
  /** Unix socket the proxy listens on (bound into each sandbox). */
  socketPath: string
  /** Hosts commands may reach: `example.com` (that name only) or `*.example.com` (its subdomains). */
  allowDomains: readonly string[]
  /** Resolves a host to its addresses. Default: the system resolver (`dns.lookup`, every address). */
  resolveHost?: (host: string) => Promise<string[]>
}

/** A running egress proxy; `close()` stops it. */
export interface EgressProxy {
  readonly socketPath: string
  close(): Promise<void>
}

/** Loopback, unspecified and link-local addresses: the host's own services and the cloud metadata endpoint. */
const LOCAL_ADDRESSES = new BlockList()
LOCAL_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4')
LOCAL_ADDRESSES.addSubnet('0.0.0.0', 8, 'ipv4')
LOCAL_ADDRESSES.addSubnet('169.254.0.0', 16, 'ipv4')
LOCAL_ADDRESSES.addAddress('::1', 'ipv6')
LOCAL_ADDRESSES.addAddress('::', 'ipv6')
LOCAL_ADDRESSES.addSubnet('fe80::', 10, 'ipv6')

/** Whether `host` (a name or an IP literal, any case, an optional final dot) is allowed by `allowDomains`. */
export function isAllowedHost(host: string, allowDomains: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1')
  return allowDomains.some(entry => {
    const domain = entry.trim().toLowerCase()
    return domain.startsWith('*.') ? name.endsWith(domain.slice(1)) : name === domain
  })
}

/** Whether `address` is one of the host's own (loopback, unspecified, link-local), never reachable through the proxy. */
export function isLocalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped !== undefined) return isLocalAddress(mapped)
  const family = isIP(address)
  return family !== 0 && LOCAL_ADDRESSES.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * An HTTP proxy on a unix socket that lets sandboxed commands reach the allowed hosts only: `CONNECT host:port`
 * (HTTPS, any TCP) and absolute-form HTTP requests. Any other host gets `403`, and so does an allowed name that
 * resolves only to the host's own addresses (its loopback services stay out of reach). The socket exists when this
 * returns (a unix socket is bound synchronously); the proxy does not keep the process alive.
 */
export function startEgressProxy(options: EgressProxyOptions): EgressProxy {
  const server = createServer((incoming, response) => { void forwardRequest(options, incoming, response) })
  server.on('connect', (incoming: IncomingMessage, client: Duplex, head: Buffer) => { void openTunnel(options, incoming, client, head) })
  server.on('clientError', (_error, socket) => socket.destroy())
  // A failed bind leaves no socket: the sandboxed commands then fail to start, which says more than a crash here.
  server.on('error', () => undefined)
  server.listen(options.socketPath).unref()
  return { socketPath: options.socketPath, close: () => closeServer(server) }
}

/** The upstream address for `host`, or the reason it is refused. */
async function upstreamAddress(options: EgressProxyOptions, host: string): Promise<{ address: string } | { refused: string }> {
  if (!isAllowedHost(host, options.allowDomains)) return { refused: `${host} is not in the sandbox's allowed domains` }
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  const addresses = isIP(bare) !== 0 ? [bare] : await (options.resolveHost ?? resolveWithSystem)(bare).catch(() => [])
  const address = addresses.find(candidate => !isLocalAddress(candidate))
  if (address !== undefined) return { address }
  return { refused: addresses.length === 0 ? `${host} does not resolve` : `${host} resolves only to local addresses` }
}

async function resolveWithSystem(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map(entry => entry.address)
}

async function openTunnel(options: EgressProxyOptions, incoming: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  client.on('error', () => client.destroy())
  const target = parseAuthority(incoming.url ?? '')
  const upstream = target === undefined ? { refused: 'bad CONNECT target' } : await upstreamAddress(options, target.host)
  if (target === undefined || 'refused' in upstream) return void client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${'refused' in upstream ? upstream.refused : ''}\n`)
  const socket = connect(target.port, upstream.address)
  socket.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n'))
  socket.on('connect', () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length > 0) socket.write(head)
    socket.pipe(client).pipe(socket)
  })
  client.on('close', () => socket.destroy())
}

async function forwardRequest(options: EgressProxyOptions, incoming: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = URL.canParse(incoming.url ?? '') ? new URL(incoming.url ?? '') : undefined
  const upstream = url?.protocol === 'http:' ? await upstreamAddress(options, url.hostname) : { refused: 'only absolute http:// requests and CONNECT are proxied' }
  if (url === undefined || 'refused' in upstream) return void response.writeHead(403, { 'content-type': 'text/plain' }).end(`${'refused' in upstream ? upstream.refused : ''}\n`)
  const headers = { ...incoming.headers }
  delete headers['proxy-connection']
  delete headers['proxy-authorization']
  const outgoing = request({ host: upstream.address, port: url.port === '' ? 80 : Number(url.port), method: incoming.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, answer => {
    response.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(response)
  })
  outgoing.on('error', () => { if (!response.headersSent) response.writeHead(502).end(); else response.destroy() })
  incoming.pipe(outgoing)
}

/** `host:port` of a CONNECT request (`[v6]:port` too), or undefined. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority)
  const port = Number(match?.[2])
  return match?.[1] === undefined || port < 1 || port > 65_535 ? undefined : { host: match[1], port }
}

function closeServer(server: Server): Promise<void> {
  return new Promise(resolve => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
}
