import http2 from 'node:http2'
import type net from 'node:net'
import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { restateRuntime } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import { todoReadTool, todoWriteTool } from 'zidane/tools'
import { registerDeployment } from '../scripts/stack/register-deployment'
import { flat, interleave, paired } from './lib/interleave'
import { figureOf } from './lib/report'
import type { Report } from './lib/report'
import { summarize } from './lib/stats'

/** Service name of the library's run: a bench-only object, served from the bench process. */
const LIBRARY_RUN_OBJECT = 'bench_library_run'
/** Issue #31's target: the deployment's run at most this many times the library's on the same work. */
const MAX_RATIO = 1.2
/** Demo directives of the measured prompt: each is a turn of one tool call; the demo model answers once more. */
const DIRECTIVES = 10

/** What the comparison needs of the running stack: Restate's ingress and admin API (the deployment is registered). */
export interface LibraryComparisonStack {
  ingressUrl: string
  adminUrl: string
}

/** The prompt both runs get: todo lists written and read in turn, so every turn calls a tool and no file is touched. */
function workPrompt(): string {
  return Array.from({ length: DIRECTIVES }, (_, index) => index % 2 === 0 ? `todo: item ${index} | item ${index + 1}` : 'todos:').join('\n')
}

/**
 * The library alone, as its README's hello-world wires it on Restate: `createAgent` on `restateRuntime`, the session
 * in the object's state, the demo model and the two todo tools. No event log, steering inbox, admission, index,
 * invocation record or workspace: what the deployment adds is the difference.
 */
const libraryRunObject = restate.object({
  name: LIBRARY_RUN_OBJECT,
  handlers: {
    run: async (ctx: restate.ObjectContext, prompt: string): Promise<{ turns: number; status: string }> => {
      const durable = restateRuntime(ctx, { promises: restate.RestatePromise, idSeed: `${ctx.key}:${ctx.request().id}` })
      const store = durable.stores.session
      const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
      const agent = createAgent({ provider: demoProvider(), tools: [todoWriteTool(), todoReadTool()], durable, session })
      const stats = await agent.run({ prompt })
      return { turns: stats.turns, status: stats.status }
    },
  },
})

/** Serves {@link libraryRunObject} in this process and registers it with the stack's Restate server; returns the closer. */
async function serveLibraryRun(adminUrl: string): Promise<() => void> {
  const endpoint = http2.createServer(restate.createEndpointHandler({ services: [libraryRunObject], logger: () => undefined }))
  const port = await new Promise<number>(resolve => { endpoint.listen(0, '127.0.0.1', () => resolve((endpoint.address() as net.AddressInfo).port)) })
  await registerDeployment(adminUrl, `http://127.0.0.1:${port}`)
  return () => { endpoint.close() }
}

/** One run of `prompt` on a new key of `target` (`<service>/<key>/run`, request-response at the ingress): ms per turn. */
async function msPerTurn(ingressUrl: string, target: string, body: unknown, turnsOf: (result: unknown) => number): Promise<number> {
  const started = performance.now()
  const response = await fetch(`${ingressUrl}/${target}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const result: unknown = await response.json()
  const wallMs = performance.now() - started
  const turns = turnsOf(result)
  if (!response.ok || !(turns > 0)) throw new Error(`${target} answered ${response.status}: ${JSON.stringify(result).slice(0, 200)}`)
  return wallMs / turns
}

/**
 * The deployment's run (`session/<key>/run` called at Restate's ingress, as the admission sends it) against the
 * library's run of the same prompt with the same demo model and todo tools (a bench object on the same Restate server),
 * interleaved, each on a new session: ms per turn, and the ratio (issue #31: at most 1.2×).
 */
export async function measureDeploymentAgainstLibrary(stack: LibraryComparisonStack, tenant: string, section: number, rounds: { warmup: number; measured: number }, report: Report): Promise<void> {
  const close = await serveLibraryRun(stack.adminUrl)
  try {
    const prompt = workPrompt()
    let count = 0
    const key = (): string => `${tenant}~vs-library-${process.pid}-${count++}`
    const samples = await interleave([
      { name: 'deployment', measure: () => msPerTurn(stack.ingressUrl, `session/${key()}/run`, { prompt }, result => Number((result as { stats?: { turns?: number } }).stats?.turns)) },
      { name: 'library', measure: () => msPerTurn(stack.ingressUrl, `${LIBRARY_RUN_OBJECT}/${key()}/run`, prompt, result => Number((result as { turns?: number }).turns)) },
    ], rounds.warmup, rounds.measured)
    const ratio = summarize(paired(samples, 'deployment', 'library', (deployment, library) => deployment / library))
    report.figures.push(
      figureOf(section, 'deployment\'s run (session object, at the ingress), per turn', 'ms/turn', summarize(flat(samples, 'deployment')), { note: `${DIRECTIVES} todo turns and a final answer, demo model, a new session each` }),
      figureOf(section, 'library\'s run, same prompt, model and todo tools (createAgent on restateRuntime)', 'ms/turn', summarize(flat(samples, 'library'))),
      figureOf(section, 'deployment\'s run ÷ library\'s, same work', '×', ratio, { target: { text: `≤ ${MAX_RATIO}×`, met: ratio.median <= MAX_RATIO } }),
    )
  } finally {
    close()
  }
}
