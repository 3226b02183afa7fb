import { PassThrough } from 'node:stream'
import type { CliIo } from '../../src/cli/run-command'

/** In-memory streams for the CLI, with what it printed on stdout and stderr. */
export function captureIo(options: { tty: boolean; cwd: string }): CliIo & { out: () => string; err: () => string; input: PassThrough } {
  const stdin = Object.assign(new PassThrough(), { isTTY: options.tty })
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', chunk => { out += String(chunk) })
  stderr.on('data', chunk => { err += String(chunk) })
  return { stdin, stdout, stderr, env: {}, cwd: options.cwd, out: () => out, err: () => err, input: stdin }
}
