import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { isAllowedHost, isLocalAddress, startEgressProxy } from '../../../src/tools/builtin/egress-proxy'
import type { EgressProxy } from '../../../src/tools/builtin/egress-proxy'
import { startFakeUpstream } from './fake-upstream'
import type { FakeUpstream } from './fake-upstream'

/** Sends `CONNECT target` to the proxy; resolves with the status and, when tunnelled, what `GET /path` returned through it. */
function connectThrough(socketPath: string, target: string, path = '/tunnel'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const connect = request({ socketPath, method: 'CONNECT', path: target })
    connect.on('connect', (response, socket, head) => {
      let body = head.toString()
      socket.on('data', (chunk: Buffer) => { body += chunk.toString() })
      socket.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      if (response.statusCode === 200) socket.write(`GET ${path} HTTP/1.1\r\nhost: ${target}\r\nconnection: close\r\n\r\n`)
    })
    connect.on('error', reject)
    connect.end()
  })
}

/** Sends an absolute-form `GET url` to the proxy, as a client with HTTP_PROXY does for http:// URLs. */
function getThrough(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const get = request({ socketPath, method: 'GET', path: url, headers: { host: new URL(url).host } }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    get.on('error', reject)
    get.end()
  })
}

describe('which hosts the egress proxy lets through', () => {
  it('allows listed names exactly, and subdomains only through a *. entry', () => {
    const allow = ['api.github.com', '*.example.com']
    expect(isAllowedHost('api.github.com', allow)).toBe(true)
    expect(isAllowedHost('API.GitHub.com.', allow)).toBe(true)
    expect(isAllowedHost('github.com', allow)).toBe(false)
    expect(isAllowedHost('evil-api.github.com', allow)).toBe(false)
    expect(isAllowedHost('a.b.example.com', allow)).toBe(true)
    expect(isAllowedHost('example.com', allow)).toBe(false)
    expect(isAllowedHost('example.com.evil.net', allow)).toBe(false)
    expect(isAllowedHost('127.0.0.1', allow)).toBe(false)
  })

  it('counts loopback, unspecified and link-local addresses as the host\'s own', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '0.0.0.0', '::1', '::', '::ffff:127.0.0.1', '169.254.169.254', 'fe80::1']) expect(isLocalAddress(address)).toBe(true)
    for (const address of ['192.0.2.2', '8.8.8.8', '2001:db8::1', '::ffff:8.8.8.8']) expect(isLocalAddress(address)).toBe(false)
  })
})

describe('the egress proxy on its unix socket', () => {
  let upstream: FakeUpstream
  let loopback: Server
  let loopbackConnections = 0
  let folder: string
  let proxy: EgressProxy
  const resolveHost = vi.fn(async (host: string) => (host === 'api.allowed.test' || host === 'other.test' ? [upstream.address] : []))

  beforeAll(async () => {
    upstream = await startFakeUpstream()
    loopback = createServer(socket => { loopbackConnections++; socket.end('loopback secret\n') })
    await new Promise<void>(resolve => loopback.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    await upstream.close()
    await new Promise(resolve => loopback.close(resolve))
  })
  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'zidane-egress-test-'))
    proxy = startEgressProxy({ socketPath: path.join(folder, 'proxy.sock'), allowDomains: ['api.allowed.test', 'localhost'], resolveHost })
    resolveHost.mockClear()
    upstream.requests.length = 0
  })
  afterEach(async () => {
    await proxy.close()
    await rm(folder, { recursive: true, force: true })
  })

  it('tunnels a CONNECT to a listed name to the address it resolves to', async () => {
    const result = await connectThrough(proxy.socketPath, `api.allowed.test:${upstream.port}`, '/through-tunnel')
    expect(result.status).toBe(200)
    expect(result.body).toContain('upstream /through-tunnel')
    expect(upstream.requests).toEqual(['GET /through-tunnel'])
  })

  it('refuses a CONNECT to a name that is not listed, without resolving it or connecting', async () => {
    const result = await connectThrough(proxy.socketPath, `other.test:${upstream.port}`)
    expect(result.status).toBe(403)
    expect(result.body).toContain('other.test is not in the sandbox\'s allowed domains')
    expect(resolveHost).not.toHaveBeenCalled()
    expect(upstream.requests).toEqual([])
  })

  it('refuses the host\'s own addresses: an IP literal, and a listed name that resolves to loopback', async () => {
    const port = (loopback.address() as { port: number }).port
    const byAddress = await connectThrough(proxy.socketPath, `127.0.0.1:${port}`)
    const listedLoopback = startEgressProxy({ socketPath: path.join(folder, 'loopback.sock'), allowDomains: ['localhost', '127.0.0.1'] })
    try {
      expect(byAddress.status).toBe(403)
      expect((await connectThrough(listedLoopback.socketPath, `localhost:${port}`)).body).toContain('localhost resolves only to local addresses')
      expect((await connectThrough(listedLoopback.socketPath, `127.0.0.1:${port}`)).status).toBe(403)
      expect(loopbackConnections).toBe(0)
    } finally {
      await listedLoopback.close()
    }
  })

  it('forwards absolute-form http:// requests to listed names only', async () => {
    const allowed = await getThrough(proxy.socketPath, `http://api.allowed.test:${upstream.port}/plain?q=1`)
    expect(allowed).toEqual({ status: 200, body: 'upstream /plain?q=1\n' })
    const refused = await getThrough(proxy.socketPath, `http://other.test:${upstream.port}/plain`)
    expect(refused.status).toBe(403)
    expect(upstream.requests).toEqual(['GET /plain?q=1'])
  })
})
