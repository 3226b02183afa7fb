/** A file operation that failed in a way the model should read: a stable `code` and a message naming only workspace paths. */
export class FileToolFailure extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.name = 'FileToolFailure'
    this.code = code
  }
}

/**
 * Turns a file-system error about `displayPath` into a {@link FileToolFailure}. The message is built from the error's
 * code only: Node's own messages carry the absolute path, which would tell the tenant where its workspace lives.
 */
export function failureOf(error: unknown, displayPath: string): FileToolFailure {
  if (error instanceof FileToolFailure) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case 'ENOENT': return new FileToolFailure('file_not_found', `File not found: ${displayPath}`)
    case 'ENOTDIR': return new FileToolFailure('not_a_directory', `Not a directory: ${displayPath} or one of its parents is a file`)
    case 'EISDIR': return new FileToolFailure('not_a_file', `${displayPath} is a directory, not a file`)
    case 'ELOOP': return new FileToolFailure('path_is_link', `${displayPath} is a symbolic link, or one appeared while it was opened; file tools do not follow it`)
    case 'ENXIO': return new FileToolFailure('not_a_file', `${displayPath} is not a regular file`)
    case 'EACCES':
    case 'EPERM': return new FileToolFailure('permission_denied', `Permission denied: ${displayPath}`)
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG': return new FileToolFailure('workspace_quota_exceeded', `Cannot write ${displayPath}: the workspace is out of space (its quota is reached)`)
    case 'ENAMETOOLONG': return new FileToolFailure('path_too_long', `The path ${displayPath} is too long`)
    default: return new FileToolFailure('file_system_error', `Cannot access ${displayPath}${code === undefined ? '' : ` (${code})`}`)
  }
}
