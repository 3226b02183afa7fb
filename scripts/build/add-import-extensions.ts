/**
 * Second half of `npm run build`: tsc keeps the sources' extensionless relative imports (`./agent/index`,
 * `./tool`), which Node's ESM loader cannot resolve. This rewrites every relative specifier in the emitted `.js` and
 * `.d.ts` files to the file it names (`./tool.js`, `./agent/index.js`), so the build runs under plain `node` and its
 * types resolve under `moduleResolution: node16/nodenext`. Only the import lines change, so source maps stay valid.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g

/** The specifier with the extension Node needs, or unchanged when it already names a file. */
export function resolveSpecifier(fromFile: string, specifier: string): string {
  if (/\.(js|json|mjs|cjs)$/.test(specifier)) return specifier
  // tsc rewrites `./x.ts` (the file worker's imports) in the JavaScript it emits, not in declarations.
  if (specifier.endsWith('.ts') && !specifier.endsWith('.d.ts')) return `${specifier.slice(0, -3)}.js`
  const target = resolve(dirname(fromFile), specifier)
  if (existsSync(`${target}.js`) || existsSync(`${target}.d.ts`)) return `${specifier}.js`
  if (existsSync(join(target, 'index.js')) || existsSync(join(target, 'index.d.ts'))) return `${specifier}/index.js`
  throw new Error(`${fromFile}: cannot resolve ${specifier}`)
}

/** Rewrites the relative specifiers of one emitted file in place. */
export function rewriteFile(file: string): void {
  const text = readFileSync(file, 'utf8')
  const next = text.replace(SPECIFIER, (_match, lead: string, quote: string, specifier: string) =>
    `${lead}${quote}${resolveSpecifier(file, specifier)}${quote}`)
  if (next !== text) writeFileSync(file, next)
}

/** Every `.js` and `.d.ts` file under a folder. */
function emittedFiles(folder: string): string[] {
  return readdirSync(folder).flatMap(name => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return emittedFiles(path)
    return path.endsWith('.js') || path.endsWith('.d.ts') ? [path] : []
  })
}

for (const file of emittedFiles(resolve(process.argv[2] ?? 'dist'))) rewriteFile(file)
