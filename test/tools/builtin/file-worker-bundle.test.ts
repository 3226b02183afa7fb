import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleWorkerModules, WorkerBundleError } from '../../../src/tools/builtin/file-worker-bundle'
import { fileWorkerStart } from '../../../src/tools/builtin/file-worker-client'
import { useSandbox } from './tool-context'

/** Runs `code` as an ES module under plain `node` and returns what it printed. */
function runModule(code: string, folder: string): string {
  return spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: folder, encoding: 'utf8', input: '' }).stdout
}

describe('bundling the file worker\'s modules into one', () => {
  const folders = useSandbox()

  it('runs the entry after the modules it imports, each in a scope of its own', () => {
    const modules = new Map([
      ['main', "import { greet as hello } from './greet.ts'\nimport { NAME } from './names.js'\nconst value = 'main'\nconsole.log(hello(NAME), value)"],
      ['greet', "import path from 'node:path'\nimport { NAME } from './names.ts'\nconst value = 'greet'\nexport function greet(name) { return `${path.basename('/x/' + name)} ${value} ${NAME}` }"],
      ['names', "import { sep } from 'node:path'\nexport const NAME = 'ada' + sep.length\nexport class Unused {}\nexport async function* lines() {}\nexport {}"],
    ])
    expect(runModule(bundleWorkerModules(modules), folders.root).trim()).toBe('ada1 greet ada1 main')
  })

  it('takes what tsc emits: double quotes, semicolons, `export {}` and a source map comment', () => {
    const modules = new Map([
      ['main', 'import { NAME } from "./names.js";\nconsole.log(NAME);\nexport {};\n//# sourceMappingURL=main.js.map'],
      ['names', 'export const NAME = "tsc";\n//# sourceMappingURL=names.js.map'],
    ])
    expect(runModule(bundleWorkerModules(modules), folders.root).trim()).toBe('tsc')
  })

  it('leaves out the modules the entry does not reach', () => {
    const modules = new Map([['main', 'console.log(1)'], ['unused', "export const X = 1"]])
    expect(bundleWorkerModules(modules)).not.toContain('__module_unused')
  })

  it.each([
    ['a package', "import x from 'lodash'\nconsole.log(x)"],
    ['a default export', "export default 1"],
    ['an export list', "const a = 1\nexport { a }"],
    ['a namespace import of its own module', "import * as other from './other.ts'\nconsole.log(other)"],
  ])('refuses %s with worker_bundle_unsupported', (_case, main) => {
    const modules = new Map([['main', main], ['other', 'export const A = 1']])
    expect(() => bundleWorkerModules(modules)).toThrow(WorkerBundleError)
    expect(() => bundleWorkerModules(modules)).toThrow(expect.objectContaining({ code: 'worker_bundle_unsupported' }))
  })

  it('refuses an import cycle and a module that is not there', () => {
    expect(() => bundleWorkerModules(new Map([['main', "import { A } from './a.ts'"], ['a', "import { B } from './main.ts'\nexport const A = 1"]]))).toThrow(/cycle/)
    expect(() => bundleWorkerModules(new Map([['main', "import { A } from './missing.ts'"]]))).toThrow(/not in the worker's folder/)
  })

  it('gives the worker one module to load: its entry, alone in its folder', async () => {
    const start = fileWorkerStart(folders.root, {})
    const entry = /'([^']+\.mjs)'$/.exec(start.command)?.[1] ?? ''
    expect(readdirSync(path.dirname(entry))).toEqual(['main.mjs'])
    const write = JSON.stringify({ op: 'write', path: 'a.txt', content: 'bundled\n', root: folders.root })
    const list = JSON.stringify({ op: 'list', path: '.', root: folders.root })
    // The last request ends without its end of line, as readline would still have read it.
    await writeFile(path.join(folders.root, 'requests.jsonl'), `${write}\n${list}`)
    const replies = spawnSync('bash', ['-c', `${start.command} < requests.jsonl`], { cwd: folders.root, encoding: 'utf8' }).stdout.trim().split('\n').map(line => JSON.parse(line) as unknown)
    expect(replies).toEqual([{ ok: true, content: 'Wrote 8 bytes to a.txt.' }, { ok: true, content: expect.stringContaining('a.txt') as unknown }])
  })
})
