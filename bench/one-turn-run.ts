import http2 from 'node:http2'
import type net from 'node:net'
import * as restate from '@restatedev/restate-sdk'
import { registerDeployment } from '../scripts/stack/register-deployment'
import { interleave, flat } from './lib/interleave'
import { censusTable, journalEntries, runCensus } from './lib/journal'
import type { AdminQuery, CensusEntry } from './lib/journal'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import { summarize } from './lib/stats'

/** Service name of the hand-written baseline: a bench-only object, registered from the bench process. */
const ONE_STEP_OBJECT = 'bench_one_step'
/** Issue #31's targets for a one-turn run through the deployment. */
const MAX_ENTRIES = 30
const MAX_WALL_MS = 25

/** What the one-turn measure needs of the running stack. */
export interface OneTurnStack {
  ingressUrl: string
  adminUrl: string
  query: AdminQuery
  /** A `hello` run of a new session through the gateway (`?wait=true`): its invocation id and wall time. */
  runHello(sessionId: string): Promise<{ invocationId: string; wallMs: number }>
}

/** The hand-written baseline: an object whose `run` does one `ctx.run` and returns its result. */
const oneStepObject = restate.object({
  name: ONE_STEP_OBJECT,
  handlers: { run: async (ctx: restate.ObjectContext, prompt: string) => ctx.run('model', () => `echo: ${prompt}`) },
})

/** Serves {@link oneStepObject} in this process and registers it with the stack's Restate server; returns the closer. */
async function serveOneStepObject(adminUrl: string): Promise<() => void> {
  const endpoint = http2.createServer(restate.createEndpointHandler({ services: [oneStepObject], logger: () => undefined }))
  const port = await new Promise<number>(resolve => { endpoint.listen(0, '127.0.0.1', () => resolve((endpoint.address() as net.AddressInfo).port)) })
  await registerDeployment(adminUrl, `http://127.0.0.1:${port}`)
  return () => { endpoint.close() }
}

/**
 * The baseline called as the gateway calls a run with `?wait=true`: one call that starts it and answers its invocation
 * id (the gateway's admission sends the run), then an attach until it ends. The gateway's own hop and the admission's
 * invocation are not in it.
 */
async function runOneStep(ingressUrl: string, key: string): Promise<number> {
  const started = performance.now()
  const sent = await fetch(`${ingressUrl}/${ONE_STEP_OBJECT}/${key}/run/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '"hello"' })
  const { invocationId } = (await sent.json()) as { invocationId: string }
  const attached = await fetch(`${ingressUrl}/restate/invocation/${invocationId}/attach`)
  if (!attached.ok) throw new Error(`attach answered ${attached.status}`)
  await attached.arrayBuffer()
  return performance.now() - started
}

/**
 * A one-turn `hello` run of a new session through the deployment (gateway → admission → session object, demo model),
 * interleaved with the hand-written one-step object: journal entries of the run's invocation and wall time from the
 * gateway's call to the run's end; the census of the last run goes in the notes.
 */
export async function measureOneTurnRun(stack: OneTurnStack, section: number, rounds: { warmup: number; measured: number }, report: Report): Promise<void> {
  const close = await serveOneStepObject(stack.adminUrl)
  try {
    const entries: number[] = []
    let last = ''
    let count = 0
    const probes = [
      { name: 'deployment', measure: async () => {
        const run = await stack.runHello(`one-turn-${process.pid}-${count++}`)
        const journal: CensusEntry[] = await journalEntries(stack.query, run.invocationId)
        entries.push(journal.length)
        last = run.invocationId
        return run.wallMs
      } },
      { name: 'hand-written', measure: () => runOneStep(stack.ingressUrl, `one-step-${count++}`) },
    ]
    const samples = await interleave(probes, rounds.warmup, rounds.measured)
    addOneTurnFigures(report, section, { entries: entries.slice(rounds.warmup), deploymentMs: flat(samples, 'deployment'), handWrittenMs: flat(samples, 'hand-written') })
    report.notes.push(`§${section} One-turn run: the journal of the last measured run's invocation and of those it caused (sys_journal; a journal Restate keeps no longer lists nothing), every entry named (docs/design/journal-entries.md says why each is there):\n\n${censusTable(await runCensus(stack.query, last))}`)
  } finally {
    close()
  }
}

function addOneTurnFigures(report: Report, section: number, result: { entries: number[]; deploymentMs: number[]; handWrittenMs: number[] }): void {
  const entries = summarize(result.entries).median
  const deployment = summarize(result.deploymentMs)
  const handWritten = summarize(result.handWrittenMs)
  report.figures.push(
    single(section, 'one-turn run through the deployment: journal entries', 'entries', entries, { target: { text: `≤ ${MAX_ENTRIES}`, met: entries <= MAX_ENTRIES }, note: `first run of a new session, \`hello\`, demo model; ${Math.min(...result.entries)}–${Math.max(...result.entries)}` }),
    figureOf(section, 'gateway call → run end (POST …/prompts?wait=true)', 'ms', deployment, { ratio: { value: deployment.median / handWritten.median, to: 'hand-written one ctx.run' }, target: { text: `≤ ${MAX_WALL_MS} ms`, met: deployment.median <= MAX_WALL_MS } }),
    figureOf(section, 'hand-written handler, one ctx.run: send + attach through the ingress', 'ms', handWritten, { note: 'as the gateway calls a run, without its own hop and the admission' }),
  )
}
