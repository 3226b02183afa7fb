import { describe, expect, it } from 'vitest'
import { parseRunArgs } from '../../src/cli/parse-args'

describe('parseRunArgs', () => {
  it('parses every flag of run', () => {
    expect(parseRunArgs(['run', '--session-db', './sessions.db', '--session', 'job-42', '--durability', 'on', '--prompt', 'Migrate', '--json', '--workspace', 'repo'])).toEqual({
      command: 'run', sessionDb: './sessions.db', session: 'job-42', durability: 'on', prompt: 'Migrate', output: 'json', workspace: 'repo',
    })
  })

  it('defaults to resume-ask and text output, and accepts --flag=value', () => {
    expect(parseRunArgs(['run', '--prompt=hi', '--stream-json'])).toEqual({ command: 'run', prompt: 'hi', durability: 'resume-ask', output: 'stream-json' })
  })

  it.each([
    [['run'], '--prompt is required'],
    [['walk', '--prompt', 'x'], 'Unknown command: walk'],
    [['run', '--prompt', 'x', '--durability', 'sometimes'], '--durability must be on, resume-ask or off'],
    [['run', '--prompt', 'x', '--json', '--stream-json'], 'exclude each other'],
    [['run', '--prompt'], '--prompt needs a value'],
    [['run', '--prompt', 'x', '--verbose'], 'Unknown option: --verbose'],
  ])('refuses %j with a usage error', (argv, message) => {
    expect(() => parseRunArgs(argv)).toThrow(expect.objectContaining({ code: 'cli_usage', message: expect.stringContaining(message) }))
  })
})
