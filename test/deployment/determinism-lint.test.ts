import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

/** The lint rule that keeps wall-clock time and randomness out of Restate handlers and the Restate runtime. */
describe('determinism lint rule', () => {
  const eslint = new ESLint({ cwd: process.cwd() })
  const rulesHit = async (filePath: string, code: string): Promise<string[]> => {
    const [result] = await eslint.lintText(code, { filePath })
    return (result?.messages ?? []).map(message => message.ruleId ?? message.message)
  }
  // The first typed lint builds the TypeScript program of the whole project (35–40 s here, longer with a second test
  // run beside it): paid once in this hook, whose timeout is long, not in the first case's 60 s.
  beforeAll(async () => { await rulesHit('services/config.ts', 'export const warm = 1\n') }, 300_000)

  it.each([
    ['services/config.ts', 'export const at = Date.now()\n'],
    ['src/restate/clock.ts', 'export const id = crypto.randomUUID()\n'],
    ['services/endpoint.ts', 'export const roll = Math.random()\n'],
    ['src/restate/runtime.ts', 'export const when = new Date()\n'],
  ])('refuses wall-clock time and randomness in %s', async (filePath, code) => {
    const hits = await rulesHit(filePath, code)
    expect(hits.some(rule => rule === 'no-restricted-properties' || rule === 'no-restricted-syntax')).toBe(true)
  })

  it('leaves the rest of the library alone (the default runtime reads the system clock by design)', async () => {
    expect(await rulesHit('src/durable/default-runtime.ts', 'export const at = Date.now()\n')).toEqual([])
  })
})
