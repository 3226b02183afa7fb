import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunResult } from '../../../contract/session'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

/**
 * The journal shape of the session object's runs, pinned. On replay the SDK compares each command with the journal,
 * state values and call parameters included: a run in flight when the services are upgraded replays on the new code
 * only if that code issues the same commands with the same payloads. This test runs the run shapes (tool calls,
 * sub-agents, a question waiting, an approval waiting) through the real services on a real server, reads each journal
 * from `sys_journal` and compares its commands with `fixtures/journal-shapes.json`: kind, name, state key, call
 * target, and the payload's JSON shape (keys in order, value types, the `type` fields verbatim).
 *
 * A failure means the change alters the journal: runs in flight at the upgrade would fail their replay. Make such a
 * change deliberately (see docs/design/journal-compatibility.md), then regenerate the fixture with
 * `ZIDANE_UPDATE_JOURNAL_SHAPES=1`. One change is safe and still fails it: a new built-in tool lengthens the `tools`
 * of the settings a run hands its sub-agents (runs in flight read theirs from their journal).
 */
const FIXTURE = fileURLToPath(new URL('./fixtures/journal-shapes.json', import.meta.url))

interface JournalRow { index: number; entry_type: string; name?: string; raw?: string }

describe('session run journals', () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    // No RESTATE_INGRESS_URL: the event doorbell is outside the journal, so it is left out.
    harness = await startRestateHarness({ services: loadSessionServices() })
  })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  const commandsOf = async (invocationId: string): Promise<string[]> => {
    const rows = await h().query<JournalRow>(`SELECT index, entry_type, name, raw FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
    return rows.filter(row => row.entry_type.startsWith('Command:')).map(describeCommand)
  }
  const finished = async (key: string, prompt: string): Promise<string[]> => {
    const { invocationId } = await h().call<SessionRunResult>(`session/${key}/run`, { prompt })
    return commandsOf(invocationId ?? '')
  }
  /**
   * A run parked on a person: its journal up to the wait, read once the question is listed in the session's pending
   * questions (the last command before the wait) and two reads 200 ms apart agree.
   */
  const waiting = async (key: string, request: { prompt: string; policy?: { approve: string[] } }): Promise<string[]> => {
    const invocationId = await h().send(`session/${key}/run`, request)
    let previous: string[] = []
    return h().waitFor(async () => {
      const commands = await commandsOf(invocationId)
      const settled = commands.some(command => command.startsWith('SetState pending_questions')) && JSON.stringify(commands) === JSON.stringify(previous)
      previous = commands
      if (!settled) await new Promise(resolve => setTimeout(resolve, 200))
      return settled ? commands : undefined
    }, 20_000, `${key} waiting on its question`)
  }

  it('keeps the commands and payloads of the run shapes', async () => {
    const shapes: Record<string, string[]> = {
      'tool calls': await finished('t1~shape-todo', 'todo: one | two'),
      'sub-agents': await finished('t1~shape-spawn', 'spawn: a | b'),
      'a question waiting': await waiting('t1~shape-ask', { prompt: 'ask: colour?' }),
      'an approval waiting': await waiting('t1~shape-approve', { prompt: 'write: a.txt hi', policy: { approve: ['write_file'] } }),
    }
    if (process.env.ZIDANE_UPDATE_JOURNAL_SHAPES === '1') writeFileSync(FIXTURE, `${JSON.stringify(shapes, null, 2)}\n`)
    expect(shapes).toEqual(JSON.parse(readFileSync(FIXTURE, 'utf8')))
  }, 180_000)
})

/**
 * One command as the fixture pins it: its kind, its name, its other text fields (state key, call target, object key)
 * and the JSON shape of its payload, with the ids a run draws (run, call and awakeable ids) written as placeholders.
 */
function describeCommand(row: JournalRow): string {
  const words: string[] = []
  let payload = ''
  for (const field of lengthDelimitedFields(Buffer.from(row.raw ?? '', 'hex'))) {
    const text = field.toString('utf8')
    if (isJson(text)) payload ||= shapeOf(JSON.parse(text))
    else if (/^[\x20-\x7e]+$/.test(text)) words.push(withoutIds(text))
    else payload ||= nestedPayload(field) // a value wrapped in a message of its own (state values, outputs)
  }
  return [row.entry_type.replace('Command: ', ''), ...words, payload].filter(Boolean).join(' ')
}

function isJson(text: string): boolean {
  if (!text.startsWith('{') && !text.startsWith('[')) return false
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** The shape of the JSON payload one message level down, or '' (binary ids, headers, and what is not a message). */
function nestedPayload(field: Buffer): string {
  try {
    const json = lengthDelimitedFields(field).map(inner => inner.toString('utf8')).find(isJson)
    return json === undefined ? '' : shapeOf(JSON.parse(json))
  } catch {
    return ''
  }
}

/** The run's drawn ids (run ids, call ids of the demo model, invocation and awakeable ids) as placeholders. */
function withoutIds(text: string): string {
  return text.replace(/run_\d+_[0-9a-f]+/g, '<run>').replace(/demo_\d+_\d+_[0-9a-z]+/g, '<call>').replace(/\b(inv|sign|prom)_[0-9A-Za-z_-]+/g, '<$1>')
}

/** The top-level length-delimited fields of a protobuf message, in order (varint and fixed fields skipped). */
function lengthDelimitedFields(bytes: Buffer): Buffer[] {
  const fields: Buffer[] = []
  let offset = 0
  const varint = (): number => {
    let value = 0
    for (let shift = 0; offset < bytes.length; shift += 7) {
      const byte = bytes[offset++] ?? 0
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) break
    }
    return value
  }
  while (offset < bytes.length) {
    const wireType = varint() & 0x07
    if (wireType === 0) varint()
    else if (wireType === 1) offset += 8
    else if (wireType === 5) offset += 4
    else if (wireType === 2) {
      const length = varint()
      fields.push(bytes.subarray(offset, offset + length))
      offset += length
    } else break // groups: not in these messages
  }
  return fields
}

/** Keys in order and value types; `type` values (event and block kinds) verbatim, as the payload's bytes depend on them. */
function shapeOf(value: unknown, key?: string): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `[${value.map(item => shapeOf(item)).join(',')}]`
  if (typeof value === 'object') return `{${Object.entries(value).map(([name, item]) => `${name}:${shapeOf(item, name)}`).join(',')}}`
  if (key === 'type' && typeof value === 'string') return JSON.stringify(value)
  return typeof value
}
