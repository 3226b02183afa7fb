#!/usr/bin/env node
// The `zidane` command: loads the TypeScript sources through tsx's ESM loader in this same process (so the terminal,
// signals and exit code are the command's own). Needs Node 22 for node:sqlite.
const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  process.stderr.write(`zidane needs Node.js 22 or newer (this is ${process.version}).\n`)
  process.exit(1)
}
const emitWarning = process.emitWarning
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning?.message
  if (typeof text === 'string' && text.includes('SQLite is an experimental feature')) return
  return emitWarning.call(process, warning, ...rest)
}
const { register } = await import('tsx/esm/api')
register()
const { main } = await import('../src/cli/main.ts')
process.exitCode = await main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() })
