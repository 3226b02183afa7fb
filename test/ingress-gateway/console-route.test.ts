import { readdir } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_FOLDER } from '../../ingress-gateway/routes/console'
import { testGateway } from './helpers/gateway'

describe('the console route', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await testGateway()
  })
  afterAll(async () => app.close())

  it('redirects / to /console, which serves the page under a self-only CSP without an API key', async () => {
    const root = await app.inject({ method: 'GET', url: '/' })
    expect(root.statusCode).toBe(302)
    expect(root.headers.location).toBe('/console')
    for (const url of ['/console', '/console/index.html']) {
      const page = await app.inject({ method: 'GET', url })
      expect(page.statusCode).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.headers['content-security-policy']).toContain("default-src 'none'; script-src 'self'")
      expect(page.headers['x-content-type-options']).toBe('nosniff')
      expect(page.body).toContain('<script type="module" src="/console/main.js">')
    }
  })

  it('serves every module and stylesheet of the folder with its content type, and nothing else', async () => {
    const files = (await readdir(CONSOLE_FOLDER)).filter(name => /\.(js|css|svg)$/.test(name))
    expect(files.length).toBeGreaterThan(5)
    for (const name of files) {
      const response = await app.inject({ method: 'GET', url: `/console/${name}` })
      expect(response.statusCode, name).toBe(200)
      expect(response.headers['content-type'], name).toMatch(name.endsWith('.js') ? /^text\/javascript/ : name.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/)
    }
    for (const url of ['/console/tsconfig.json', '/console/..%2Fapp.ts', '/console/%2E%2E%2Froutes%2Fconsole.ts', '/console/nope.js', '/console/constructor', '/console/__proto__']) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().error.code, url).toBe('route_not_found')
    }
  })

  it('is not in the OpenAPI document', async () => {
    const paths = Object.keys((await app.inject({ method: 'GET', url: '/openapi.json' })).json().paths as object)
    expect(paths.filter(path => path === '/' || path.startsWith('/console'))).toEqual([])
  })
})
