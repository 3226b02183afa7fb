import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'vite'

const PAGE_FOLDER = join(import.meta.dirname, 'chat-page')
const REPOSITORY = join(import.meta.dirname, '..', '..')
const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' }

/** The built `useChat` page served on its own loopback origin (not the gateway's: the page's calls are cross-origin). */
export interface ChatPageServer {
  /** `http://127.0.0.1:<port>`: what `GATEWAY_CORS_ORIGINS` must allow. */
  origin: string
  /** The page's address for a session of the gateway at `gatewayUrl`, with the tenant's API key. */
  url(gatewayUrl: string, apiKey: string, sessionId: string): string
  close(): Promise<void>
}

/**
 * Type-checks the page with its own tsconfig (DOM and JSX, which the repository's tsconfig leaves out), builds it with
 * vite into a temporary folder, and serves that folder on a free loopback port. Start it before the stack: the stack
 * needs its origin.
 */
export async function startChatPage(): Promise<ChatPageServer> {
  await checkPageTypes()
  const outDir = await mkdtemp(join(tmpdir(), 'zidane-chat-page-'))
  await build({
    root: PAGE_FOLDER,
    configFile: false,
    logLevel: 'silent',
    base: './',
    oxc: { jsx: { runtime: 'automatic' } },
    build: { outDir, emptyOutDir: true, minify: false, reportCompressedSize: false },
  })
  const served = await serveFolder(outDir)
  return {
    origin: served.origin,
    url: (gatewayUrl, apiKey, sessionId) => `${served.origin}/index.html?${new URLSearchParams({ gateway: gatewayUrl, key: apiKey, session: sessionId }).toString()}`,
    close: async () => {
      await served.close()
      await rm(outDir, { recursive: true, force: true })
    },
  }
}

/** Vite does not type-check: tsc does, with the page's tsconfig. */
async function checkPageTypes(): Promise<void> {
  const tsc = join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc')
  await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', join(PAGE_FOLDER, 'tsconfig.json')]).catch((error: { stdout?: string }) => {
    throw new Error(`the chat page does not type-check:\n${error.stdout ?? String(error)}`)
  })
}

/** A static file server of `folder` on 127.0.0.1 and a free port; a missing file is 404. */
async function serveFolder(folder: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://page').pathname)).replace(/^(\.\.[/\\])+/, '')
    readFile(join(folder, path === '/' ? 'index.html' : path)).then(
      body => response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body),
      () => response.writeHead(404).end(),
    )
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
