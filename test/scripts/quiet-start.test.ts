import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { freeStackPortsEnv } from '../../scripts/stack/free-port'

/** A line at warning level or above, in the formats the stack's processes print (Restate's, pino's, Node's). */
const WARNING_OR_WORSE = /\b(WARN|ERROR|FATAL)\b|"level":[456]0|\bWarning\b|\bwarning:|Error:/

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

/** Runs `npm start`'s program on free ports in a temporary data folder; resolves with its output once `until` matches or it exits. */
async function npmStart(env: Record<string, string>, until: RegExp) {
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-start-'))
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, ...(await freeStackPortsEnv()), ZIDANE_DATA_DIR: dataDir, ANTHROPIC_API_KEY: '', GATEWAY_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  // Restate colours its level names; without the colour codes they are whole words again.
  const plain = (text: string): string => stripVTControlCharacters(text)
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  cleanups.push(async () => {
    // SIGINT, as Ctrl-C: the stack stops its own processes (a SIGKILL would leave them running).
    if (child.exitCode === null) { child.kill('SIGINT'); await exited }
    await rm(dataDir, { recursive: true, force: true })
  })
  await new Promise<void>(resolve => {
    const read = (chunk: Buffer): void => { output += plain(chunk.toString()); if (until.test(output)) resolve() }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    void exited.then(() => resolve())
  })
  return { child, exited, output: () => output }
}

describe('npm start', () => {
  it('prints no warning or error up to "zidane is up", and Ctrl-C stops every process and says so', async () => {
    const start = await npmStart({}, /zidane is up/)
    const upTo = start.output().slice(0, start.output().indexOf('zidane is up'))
    expect(start.output()).toContain('zidane is up')
    expect(upTo.split('\n').filter(line => WARNING_OR_WORSE.test(line))).toEqual([])
    expect(upTo.match(/Validating requests using signing keys/g) ?? []).toHaveLength(1)
    start.child.kill('SIGINT')
    expect(await start.exited).toBe(0)
    expect(start.output().trimEnd().split('\n').at(-1)).toBe('[stack] stopped')
    expect(start.output()).not.toMatch(WARNING_OR_WORSE)
  }, 120_000)

  it('logs one line for a prompt at the default level, and none while idle', async () => {
    const start = await npmStart({}, /zidane is up[\s\S]*releases roll/i)
    const gatewayUrl = /Gateway: (http:\/\/\S+)/.exec(start.output())?.[1]
    const apiKey = /API key[^:]*: (zk_\S+)/.exec(start.output())?.[1]
    await new Promise(resolve => setTimeout(resolve, 1_000)) // the start's own /healthz check logs its request line
    const idleFrom = start.output().length
    await new Promise(resolve => setTimeout(resolve, 6_000)) // the live hub's lease refresh (every 5 s) included
    expect(start.output().slice(idleFrom)).toBe('')
    const before = start.output().split('\n').length
    const response = await fetch(`${gatewayUrl}/v1/sessions/quiet/prompts?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'write: a.txt hi\nread: a.txt' }) })
    expect(response.status).toBe(200)
    await new Promise(resolve => setTimeout(resolve, 2_000)) // the run's last invocations (index, event log) end after the answer
    const lines = start.output().split('\n').slice(before - 1).filter(line => line.trim() !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^\[gateway\] .*"url":"\/v1\/sessions\/quiet\/prompts\?wait=true".*"statusCode":200/)
  }, 120_000)

  it('stops before starting anything when a port is taken, naming the port and its variable', async () => {
    const taken = net.createServer()
    await new Promise<void>(resolve => taken.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise(resolve => taken.close(() => resolve())))
    const port = (taken.address() as net.AddressInfo).port
    const start = await npmStart({ RESTATE_INGRESS_PORT: String(port) }, /\[stack\] stopped/)
    expect(await start.exited).toBe(1)
    expect(start.output()).toContain(`port ${port} is already in use; set RESTATE_INGRESS_PORT`)
    expect(start.output()).not.toContain('[restate]')
  }, 60_000)
})
