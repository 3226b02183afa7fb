import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { RouteDependencies } from '../app'
import { GatewayError } from '../errors'

/** Where the console's files are: plain ES modules and CSS, served as they are (no build step). */
export const CONSOLE_FOLDER = join(import.meta.dirname, '..', 'console')

/** The only files served, with their content types: nothing else under the folder is reachable. */
const CONSOLE_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'main.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'event-stream.js': 'text/javascript; charset=utf-8',
  'transcript.js': 'text/javascript; charset=utf-8',
  'pending-panel.js': 'text/javascript; charset=utf-8',
  'session-view.js': 'text/javascript; charset=utf-8',
  'session-list-view.js': 'text/javascript; charset=utf-8',
}

/** Same origin only: the console loads nothing from elsewhere and calls only this gateway. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
} as const

const hidden = { schema: { hide: true } } as const

async function sendFile(reply: FastifyReply, name: string): Promise<FastifyReply> {
  const contentType = Object.hasOwn(CONSOLE_FILES, name) ? CONSOLE_FILES[name] : undefined
  if (contentType === undefined) throw new GatewayError('route_not_found', `no console file ${name}`)
  const body = await readFile(join(CONSOLE_FOLDER, name))
  return reply.headers({ ...SECURITY_HEADERS, 'content-type': contentType }).send(body)
}

/**
 * The console (`/console`, and `/` redirecting to it): static files from a fixed list, no API key (the page asks for
 * one and calls the public API with it), under a self-only Content-Security-Policy. Hidden from the OpenAPI document.
 */
export const consoleRoutes: FastifyPluginAsync<RouteDependencies> = async (app) => {
  app.get('/', hidden, async (_request, reply) => reply.redirect('/console', 302))
  app.get('/console', hidden, async (_request, reply) => sendFile(reply, 'index.html'))
  app.get<{ Params: { file: string } }>('/console/:file', hidden, async (request, reply) => sendFile(reply, request.params.file === '' ? 'index.html' : request.params.file))
}
