import { fileURLToPath } from 'node:url'

/** The `zidane` command's script of this installation: `bin/zidane.mjs`, two folders up from `src/cli/` and `dist/cli/` alike. */
export function zidaneScriptPath(): string {
  return fileURLToPath(new URL('../../bin/zidane.mjs', import.meta.url))
}

/** `value` as one shell word: bare when it holds only safe characters, else in single quotes. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`
}

/**
 * The command that answers question `id` of the sessions file at `sessionDbPath` (absolute), pasteable from any
 * folder: this Node binary and this installation's script by absolute path, so it never looks for `zidane` on PATH or
 * asks the registry (as `npx zidane` would outside the project).
 */
export function answerHint(sessionDbPath: string, id: string, nodePath = process.execPath, scriptPath = zidaneScriptPath()): string {
  return `${[nodePath, scriptPath, 'answer', '--session-db', sessionDbPath, '--id', id, '--answer'].map(shellWord).join(' ')} "…"`
}
