/**
 * What the services send the file worker and what it answers: one JSON request per line on its standard input, one
 * JSON reply per line on its standard output, in order. Paths in requests are as the model wrote them; the worker resolves them inside `root`.
 */

/** One file operation, with the workspace root it is confined to (an absolute path, the same inside the sandbox). */
export type FileRequest =
  | { op: 'read'; root: string; path: string; offset: number; limit: number }
  | { op: 'write'; root: string; path: string; content: string; quotaBytes?: number }
  | { op: 'edit'; root: string; path: string; oldText: string; newText: string; replaceAll: boolean; quotaBytes?: number }
  | { op: 'grep'; root: string; path: string; pattern: string; glob?: string }
  | { op: 'glob'; root: string; path: string; pattern: string }
  | { op: 'list'; root: string; path: string }
  | { op: 'persist'; root: string; folder: string; name: string; content: string; quotaBytes?: number }

/** The worker's answer: the tool's text, or a failure with a stable code and a message that names no host path. */
export type FileReply = ({ ok: true; content: string } | { ok: false; code: string; message: string }) & {
  /** Set when the worker has used much of its CPU-time bound (`ulimit -t` is per process): it exits after this reply. */
  retire?: true
}
