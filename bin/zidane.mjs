#!/usr/bin/env node
// The `zidane` command: runs the CLI in this same process (so the terminal, signals and exit code are the command's
// own). Needs Node 22 for node:sqlite.
const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  // The project pins Node 22 through the `node` npm package: re-run this command with it when it is installed.
  const { existsSync, realpathSync } = await import('node:fs')
  const { spawnSync } = await import('node:child_process')
  const pinned = new URL('../node_modules/node/bin/node', import.meta.url).pathname
  if (!existsSync(pinned)) {
    process.stderr.write(`zidane needs Node.js 22 or newer (this is ${process.version}); run npm install first.\n`)
    process.exit(1)
  }
  const result = spawnSync(pinned, [realpathSync(new URL(import.meta.url).pathname), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(result.status ?? 1)
}
// A closed pipe (`zidane run --stream-json | head`) ends the command quietly instead of with a stack trace.
process.stdout.on('error', error => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})
const emitWarning = process.emitWarning
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning?.message
  if (typeof text === 'string' && text.includes('SQLite is an experimental feature')) return
  return emitWarning.call(process, warning, ...rest)
}
// In this repository the command runs the TypeScript sources through tsx; the installed package runs its build.
const { existsSync } = await import('node:fs')
const tsx = existsSync(new URL('../src/cli/main.ts', import.meta.url)) ? await import('tsx/esm/api').catch(() => undefined) : undefined
tsx?.register()
const fromSources = tsx !== undefined
const { main } = await import(fromSources ? '../src/cli/main.ts' : '../dist/cli/main.js')
process.exitCode = await main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() })
