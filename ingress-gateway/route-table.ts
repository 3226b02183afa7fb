import type { FastifyInstance } from 'fastify'

/** The gateway's routes by path pattern, to tell "no such path" (404) from "not with this method" (405). */
export interface RouteTable {
  /** The methods some route serves `path` with (a concrete request path, without the query); empty when none. */
  methodsOf(path: string): string[]
}

interface PatternRoutes {
  pattern: RegExp
  methods: Set<string>
}

/** Records every route added to `app` from now on (call it before registering routes). */
export function recordRoutes(app: FastifyInstance): RouteTable {
  const byUrl = new Map<string, PatternRoutes>()
  app.addHook('onRoute', (route) => {
    const entry = byUrl.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() }
    for (const method of [route.method].flat()) entry.methods.add(method)
    byUrl.set(route.url, entry)
  })
  return {
    methodsOf(path) {
      const methods = new Set<string>()
      for (const entry of byUrl.values()) if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method)
      return [...methods].sort()
    },
  }
}

/** `/v1/sessions/:sessionId` → `^/v1/sessions/[^/]+$`; a trailing `*` matches the rest of the path. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}$`)
}
