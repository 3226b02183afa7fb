import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/**
 * Prints the size of the deployment's own code (`services/`, `ingress-gateway/`, `contract/`): lines of each folder,
 * and how many of them are neither blank nor comments. `npm run lines`; the figure the deployment is held to.
 */

/** The folders whose code the deployment maintains on top of the library. */
const DEPLOYMENT_FOLDERS = ['contract', 'services', 'ingress-gateway']

/** Lines of one TypeScript file: all of them, and those holding code. */
interface FileLines { total: number; code: number }

function countLines(text: string): FileLines {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  let code = 0
  let inBlockComment = false
  for (const raw of lines) {
    const line = raw.trim()
    if (inBlockComment) {
      if (line.includes('*/')) inBlockComment = false
      continue
    }
    if (line === '' || line.startsWith('//')) continue
    if (line.startsWith('/*')) {
      inBlockComment = !line.includes('*/')
      continue
    }
    code += 1
  }
  return { total: lines.length, code }
}

function typescriptFiles(folder: string): string[] {
  let entries
  try {
    entries = readdirSync(folder, { withFileTypes: true })
  } catch {
    return []
  }
  return entries.flatMap(entry => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return typescriptFiles(path)
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : []
  })
}

const root = join(import.meta.dirname, '..')
let total = 0
let code = 0
for (const folder of DEPLOYMENT_FOLDERS) {
  const files = typescriptFiles(join(root, folder))
  const sum = files.map(file => countLines(readFileSync(file, 'utf8'))).reduce((a, b) => ({ total: a.total + b.total, code: a.code + b.code }), { total: 0, code: 0 })
  total += sum.total
  code += sum.code
  console.log(`${relative(root, join(root, folder)).padEnd(18)} ${String(files.length).padStart(3)} files ${String(sum.total).padStart(6)} lines ${String(sum.code).padStart(6)} code`)
}
console.log(`${'deployment'.padEnd(18)} ${''.padStart(9)} ${String(total).padStart(6)} lines ${String(code).padStart(6)} code`)
