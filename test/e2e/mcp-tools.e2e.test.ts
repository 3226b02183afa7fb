import { realpathSync } from 'node:fs'
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'
import { startHttpMcpServer } from '../../support/mcp-server/http-mcp-server'
import type { HttpMcpServer } from '../../support/mcp-server/http-mcp-server'
import { REPOSITORY_MODULES, testMcpServerEntry } from '../../support/mcp-server/stdio-entry'

/**
 * SIGKILLs of the services during MCP calls. The issue asks for 50 (`ZIDANE_MCP_KILLS=50` runs them, about five
 * minutes here); CI runs what fits in about 90 s.
 */
const MCP_KILLS = Number(process.env.ZIDANE_MCP_KILLS ?? 6)
/** `json` with every array of byte values replaced by the text those bytes spell. */
function decodeByteArrays(json: string): string {
  return json.replace(/\[(\d{1,3}(?:,\d{1,3})*)\]/g, (_match, list: string) => Buffer.from(list.split(',').map(Number)).toString('utf8'))
}

/** The secret the servers are configured with: it must appear nowhere in Restate, the session, its events or the logs. */
const SECRET = 'mcp-secret-7d1e4b90c2a35f68'
const CALLS_PER_RUN = 6

interface Block { type: string; id?: string; name?: string; toolUseId?: string; content?: unknown; isError?: boolean }
interface View { status: string; turns: Array<{ content: Block[] }> }

describe('MCP tools through the whole stack', () => {
  let stack: TestStack | undefined
  let files: HttpMcpServer
  let flaky: HttpMcpServer
  let entry = ''
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  // Set by the kill test: each call that arrives may kill the services while it runs.
  let onCall: () => void = () => undefined

  beforeAll(async () => {
    files = await startHttpMcpServer({ token: SECRET, onCall: () => onCall() })
    flaky = await startHttpMcpServer({ downAfterList: true })
    const down = await startHttpMcpServer()
    await down.close()
    entry = testMcpServerEntry()
    const node = realpathSync(process.execPath)
    const servers = [
      { name: 'files', transport: 'http', url: files.url, headers: { Authorization: 'Bearer ${ZIDANE_MCP_TEST_TOKEN}' }, callTimeoutMs: 20_000 },
      { name: 'flaky', transport: 'http', url: flaky.url, connectTimeoutMs: 3000, callTimeoutMs: 3000 },
      { name: 'down', transport: 'http', url: down.url, connectTimeoutMs: 3000 },
      { name: 'local', transport: 'stdio', command: `exec '${node}' '${entry}' --stdio`, env: { MCP_TEST_SECRET: '${ZIDANE_MCP_TEST_TOKEN}' }, readOnlyPaths: [node, REPOSITORY_MODULES], elicitation: true },
    ]
    stack = await startTestStack({ ZIDANE_MCP_SERVERS: JSON.stringify(servers), ZIDANE_MCP_TEST_TOKEN: SECRET })
  }, 180_000)
  afterAll(async () => {
    await stack?.destroy()
    await files.close()
    await flaky.close()
    await rm(entry, { force: true })
  })

  const runToEnd = async (session: string, prompt: string, timeoutMs = 120_000, extra: Record<string, unknown> = {}): Promise<View> => {
    const response = await s().request(`/v1/sessions/${session}/prompts`, { method: 'POST', body: JSON.stringify({ prompt, ...extra }) })
    expect(response.status).toBe(202)
    return waitFor(async () => {
      const read = await s().request(`/v1/sessions/${session}?turnsAfter=0&limit=200`)
      if (read.status !== 200) return undefined
      const view = (await read.json()) as View
      return view.status === 'completed' || view.status === 'failed' ? view : undefined
    }, timeoutMs, `session ${session} to end`)
  }
  const resultsOf = (view: View): Block[] => view.turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result'))
  const textOf = (block: Block | undefined): string => (typeof block?.content === 'string' ? block.content : JSON.stringify(block?.content))

  it('the model calls HTTP and sandboxed stdio tools; a server down at listing or at the call gives a tool error and the run completes', async () => {
    const view = await runToEnd('mcp-basic', [
      'mcp: files echo {"text":"hello"}',
      'mcp: files picture',
      'mcp: local whoami',
      'mcp: flaky echo {"text":"lost"}',
      'mcp: down echo {"text":"never"}',
    ].join('\n'))
    expect(view.status).toBe('completed')
    const results = resultsOf(view)
    expect(textOf(results[0])).toBe('echo: hello')
    expect(results[1]?.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'image', mediaType: 'image/png' })]))
    expect(textOf(results[2])).toBe(`secret set (${SECRET.length} characters); variables HOME,LANG,MCP_TEST_SECRET,PATH,PWD,SHLVL,TERM`)
    expect(results[3]).toMatchObject({ isError: true })
    expect(textOf(results[3])).toMatch(/The MCP tool flaky__echo failed/)
    expect(results[4]).toMatchObject({ isError: true })
    expect(textOf(results[4])).toMatch(/down__echo/)
  }, 180_000)

  it('a prompt policy denies an MCP tool by its prefixed name; a sub-agent calls MCP tools too', async () => {
    const before = files.calls.length
    const denied = await runToEnd('mcp-policy', 'mcp: files record {"note":"denied"}', 120_000, { policy: { deny: ['files__record'] } })
    expect(denied.status).toBe('completed')
    expect(resultsOf(denied)[0]).toMatchObject({ isError: true })
    expect(textOf(resultsOf(denied)[0])).toMatch(/files__record/)
    expect(files.calls.length).toBe(before)
    const spawned = await runToEnd('mcp-child', 'spawn: mcp: files echo {"text":"from a child"}')
    expect(spawned.status).toBe('completed')
    expect(textOf(resultsOf(spawned)[0])).toContain('echo: from a child')
  }, 180_000)

  it('a server request for input (elicitation) is a pending question answered through /v1/awakeables/{id}/resolve', async () => {
    const response = await s().request('/v1/sessions/mcp-elicit/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'mcp: local confirm {"question":"deploy now?"}' }) })
    expect(response.status).toBe(202)
    const question = await waitFor(async () => {
      const read = await s().request('/v1/sessions/mcp-elicit')
      const body = (await read.json()) as { pending?: Array<{ id: string; question: string; answerUrl: string }> }
      return body.pending?.[0]
    }, 60_000, 'the elicitation to be pending')
    expect(question.question).toContain('The tool local__confirm asks: deploy now?')
    const answered = await s().request(`/v1/awakeables/${question.id}/resolve`, { method: 'POST', body: JSON.stringify({ answer: '{"answer":"yes"}' }) })
    expect(answered.status).toBe(200)
    const view = await waitFor(async () => {
      const read = await s().request('/v1/sessions/mcp-elicit?turnsAfter=0&limit=200')
      const body = (await read.json()) as View
      return body.status === 'completed' ? body : undefined
    }, 60_000, 'the run to complete')
    expect(textOf(resultsOf(view)[0])).toBe('confirmed: accept {"answer":"yes"}')
  }, 180_000)

  it('an elicitation whose process was killed while it waited is reported interrupted, never sent again', async () => {
    const response = await s().request('/v1/sessions/mcp-elicit-kill/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'mcp: local confirm {"question":"still there?"}' }) })
    expect(response.status).toBe(202)
    const pending = async (): Promise<{ id: string } | undefined> => {
      const read = await s().request('/v1/sessions/mcp-elicit-kill')
      return ((await read.json()) as { pending?: Array<{ id: string }> }).pending?.[0]
    }
    const question = await waitFor(pending, 60_000, 'the elicitation to be pending')
    // The call the question belongs to was held open by this process: it dies with it.
    s().services().current()?.kill('SIGKILL')
    // The answer is taken (200) when it reaches the question before the restarted run does; a restarted run that gets
    // there first closes the question its killed attempt left (409 `question_closed`): both are right, and either way
    // the call must end interrupted and never be sent again.
    const answered = await waitFor(async () => {
      const answer = await s().request(`/v1/awakeables/${question.id}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'yes' }) })
      if (answer.status === 200) return 'taken'
      const code = answer.status === 409 ? ((await answer.json()) as { error?: { code?: string } }).error?.code : undefined
      if (code === 'already_answered') return 'taken' // an earlier try (answered 202 while the services were down) got it
      return code === 'question_closed' ? code : undefined
    }, 60_000, 'the answer to be taken, or the question closed by the restarted run')
    expect(['taken', 'question_closed']).toContain(answered)
    const view = await waitFor(async () => {
      const read = await s().request('/v1/sessions/mcp-elicit-kill?turnsAfter=0&limit=200')
      const body = (await read.json()) as View
      return body.status === 'completed' ? body : undefined
    }, 90_000, 'the run to complete')
    expect(resultsOf(view)[0]?.content).toBe(INTERRUPTED_TOOL_TEXT)
    // The stdio server's ledger in the session's workspace: the call was received once, never sent again.
    const ledgers = (await readdir(join(s().dataDir, 'workspaces'), { recursive: true })).filter(name => name.endsWith('mcp-calls.jsonl'))
    const confirms = (await Promise.all(ledgers.map(name => readFile(join(s().dataDir, 'workspaces', name), 'utf8'))))
      .flatMap(text => text.trim().split('\n')).map(line => JSON.parse(line) as { tool: string; key: string }).filter(record => record.tool === 'confirm')
    expect(confirms.length).toBeGreaterThanOrEqual(1)
    expect(new Set(confirms.map(record => record.key)).size).toBe(confirms.length)
  }, 180_000)

  it('random SIGKILLs during MCP calls: no call is sent twice, every one cut short is reported interrupted', async () => {
    let kills = 0
    let armed = true
    onCall = () => {
      if (!armed || kills >= MCP_KILLS || Math.random() < 0.4) return
      armed = false
      kills++
      // Somewhere in the call (300 ms) or just after its result, before or after Restate journaled it.
      setTimeout(() => s().services().current()?.kill('SIGKILL'), Math.floor(Math.random() * 450))
    }
    const views: View[] = []
    const started = Date.now()
    for (let run = 0; kills < MCP_KILLS && Date.now() - started < 15 * 60_000; run++) {
      const prompt = Array.from({ length: CALLS_PER_RUN }, (_unused, index) => `mcp: files record {"note":"r${run}c${index}","delayMs":300}`).join('\n')
      armed = true
      const view = await runToEnd(`mcp-kill-${run}`, prompt, 240_000)
      expect(view.status).toBe('completed')
      views.push(view)
    }
    onCall = () => undefined
    const byKey = new Map<string, number>()
    for (const call of files.calls.filter(record => record.tool === 'record')) byKey.set(call.key ?? 'none', (byKey.get(call.key ?? 'none') ?? 0) + 1)
    const resent = [...byKey].filter(([, count]) => count > 1)
    const results = views.flatMap(resultsOf)
    const interrupted = results.filter(block => block.content === INTERRUPTED_TOOL_TEXT)
    const received = new Set([...byKey.keys()].map(key => key.split(':').at(-1)))
    console.log(`[mcp kills] kills ${kills}, runs ${views.length}, calls sent ${files.calls.filter(record => record.tool === 'record').length}, results ${results.length}, interrupted ${interrupted.length}, resent ${resent.length}`)
    expect(kills).toBe(MCP_KILLS)
    expect(interrupted.length).toBeLessThanOrEqual(kills)
    expect(byKey.has('none')).toBe(false)
    expect(resent).toEqual([])
    // Every result is either the server's answer or the interrupted text, and each answer came from a call it received.
    for (const result of results) {
      if (result.content === INTERRUPTED_TOOL_TEXT) continue
      expect(textOf(result)).toMatch(/^recorded r\d+c\d+$/)
      expect(received.has(result.toolUseId)).toBe(true)
    }
    expect(results).toHaveLength(views.length * CALLS_PER_RUN)
  }, 20 * 60_000)

  it('the secret token appears nowhere: journal, state (sessions and event logs), events, logs', async () => {
    const rows = async <T>(sql: string): Promise<T[]> => {
      const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
      return ((await response.json()) as { rows: T[] }).rows
    }
    // Journaled values are bytes, shown as arrays of numbers: decoded, so a secret inside a step's result is found.
    const journal = (await rows<{ entry_json: string }>('SELECT entry_json FROM sys_journal')).map(row => decodeByteArrays(row.entry_json)).join('\n')
    const state = (await rows<{ value_utf8: string | null }>('SELECT value_utf8 FROM state')).map(row => row.value_utf8 ?? '').join('\n')
    // The reads see what the runs wrote: the tool list step, the tools' names, a call's result.
    expect(journal).toContain('"name":"files__record"')
    expect(journal).toContain('echo: hello')
    expect(state).toContain('files__record')
    expect(journal.split(SECRET).length - 1).toBe(0)
    expect(state.split(SECRET).length - 1).toBe(0)
    const events = await readEvents('mcp-basic')
    expect(events).toContain('files__echo')
    expect(events).not.toContain(SECRET)
    expect(s().output()).not.toContain(SECRET)
    expect(s().output()).toContain('MCP servers files (http), flaky (http), down (http), local (stdio)')
  }, 60_000)

  /** The session's event log as the gateway streams it, read for a moment. */
  async function readEvents(session: string): Promise<string> {
    const response = await s().request(`/v1/sessions/${session}/events?after=0`, { signal: AbortSignal.timeout(3000) })
    let text = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8')
    } catch {
      // the timeout ends the stream
    }
    return text
  }
})
