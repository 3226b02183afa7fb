/**
 * One JavaScript file from the file worker's modules (its folder, types stripped): a cold worker then loads one module
 * instead of 18, which halves what loading its entry costs (about 8 ms of CPU of a 44 ms start, measured on Node 22).
 * Each module runs in a function scope of its own, in dependency order, so their top-level names never meet. The
 * worker's folder keeps to a small subset of ESM that this checks: named imports of Node's modules (`node:…`) and of
 * its own (`./x.ts`, `./x.js`), a default import of a Node module, and `export` before a function, class or const.
 */

/** A module of the worker's folder that the bundle cannot take as written. */
export class WorkerBundleError extends Error {
  /** Stable code of this failure. */
  readonly code = 'worker_bundle_unsupported'
}

interface ParsedModule { code: string; dependencies: string[]; exports: string[] }

const IMPORT = /^import\s+([\s\S]*?)\s+from\s+(['"])([^'"]+)\2;?[ \t]*$/gm
const EXPORT = /^export\s+(?:(?:async\s+)?function\s*\*?\s*|class\s+|const\s+)([A-Za-z_$][\w$]*)/gm

/** The module name a relative specifier names (`./read-file.ts` → `read-file`), or undefined for a Node module. */
function relativeName(specifier: string): string | undefined {
  if (!specifier.startsWith('./')) return undefined
  return specifier.slice(2).replace(/\.(ts|js|mjs)$/, '')
}

function nodeBinding(specifier: string): string {
  return `__node_${specifier.replace(/^node:/, '').replace(/\W/g, '_')}`
}

function moduleBinding(name: string): string {
  return `__module_${name.replace(/\W/g, '_')}`
}

/** `{ a, b as c }` as a destructuring pattern `{ a, b: c }`; a default binding `x` becomes `{ default: x }`. */
function pattern(bindings: string, file: string): string {
  const named = /^\{([\s\S]*)\}$/.exec(bindings.trim())
  if (named === null) {
    if (/^[A-Za-z_$][\w$]*$/.test(bindings.trim())) return `{ default: ${bindings.trim()} }`
    throw new WorkerBundleError(`${file}: unsupported import ${bindings}`)
  }
  return `{ ${(named[1] ?? '').split(',').map(part => part.trim()).filter(Boolean).map(part => part.replace(/\s+as\s+/, ': ')).join(', ')} }`
}

function parse(file: string, source: string, nodeModules: Set<string>): ParsedModule {
  const dependencies: string[] = []
  const exports: string[] = []
  let code = source.replace(IMPORT, (_statement, bindings: string, _quote: string, specifier: string) => {
    const name = relativeName(specifier)
    if (name !== undefined) dependencies.push(name)
    else if (specifier.startsWith('node:')) nodeModules.add(specifier)
    else throw new WorkerBundleError(`${file}: imports ${specifier}, neither Node's nor the worker's own`)
    return `const ${pattern(bindings, file)} = ${name === undefined ? nodeBinding(specifier) : moduleBinding(name)};`
  })
  code = code.replace(EXPORT, (statement: string, name: string) => {
    exports.push(name)
    return statement.replace(/^export\s+/, '')
  })
  // What tsc writes for a module of types only, and the map comment of a build.
  code = code.replace(/^export\s*\{\s*\};?[ \t]*$/gm, '').replace(/^\/\/# sourceMappingURL=.*$/gm, '')
  if (/^\s*(import|export)\b[^(.]/m.test(code)) throw new WorkerBundleError(`${file}: an import or export the bundle does not handle is left`)
  return { code, dependencies, exports }
}

/** The names of `modules` from `entry`'s dependencies first to `entry` last; throws on a missing module or a cycle. */
function order(parsed: Map<string, ParsedModule>, entry: string): string[] {
  const done: string[] = []
  const visiting = new Set<string>()
  const visit = (name: string): void => {
    if (done.includes(name)) return
    if (visiting.has(name)) throw new WorkerBundleError(`${name}: import cycle`)
    const module = parsed.get(name)
    if (module === undefined) throw new WorkerBundleError(`${name}: imported but not in the worker's folder`)
    visiting.add(name)
    for (const dependency of module.dependencies) visit(dependency)
    visiting.delete(name)
    done.push(name)
  }
  visit(entry)
  return done
}

/**
 * One ES module running `entry` of `modules` (name without extension → JavaScript, types stripped): `entry` at the
 * top level (it may use top-level `await`), every module it reaches before it in a function scope of its own. Throws
 * {@link WorkerBundleError} for an import, an export or a module graph it does not handle.
 */
export function bundleWorkerModules(modules: ReadonlyMap<string, string>, entry = 'main'): string {
  const nodeModules = new Set<string>()
  const parsed = new Map([...modules].map(([name, source]) => [name, parse(name, source, nodeModules)]))
  const names = order(parsed, entry)
  const body = names.map(name => {
    const module = parsed.get(name) as ParsedModule
    if (name === entry) return module.code
    return `const ${moduleBinding(name)} = (() => {\n${module.code}\nreturn { ${module.exports.join(', ')} };\n})();`
  })
  const header = [...nodeModules].sort().map(specifier => `import * as ${nodeBinding(specifier)} from '${specifier}';`)
  return `${[...header, ...body].join('\n')}\n`
}
