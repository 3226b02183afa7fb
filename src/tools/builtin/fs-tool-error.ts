import { ToolError } from '../tool'

/** Turns a file-system error about `displayPath` into a model-readable `ToolError` (not found, is a directory, …). */
export function fsToolError(error: unknown, displayPath: string): ToolError {
  if (error instanceof ToolError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case 'ENOENT': return new ToolError(`File not found: ${displayPath}`, 'file_not_found')
    case 'ENOTDIR': return new ToolError(`Not a directory: ${displayPath} or one of its parents is a file`, 'not_a_directory')
    case 'EISDIR': return new ToolError(`${displayPath} is a directory, not a file`, 'not_a_file')
    case 'EACCES':
    case 'EPERM': return new ToolError(`Permission denied: ${displayPath}`, 'permission_denied')
    default: return new ToolError(`Cannot access ${displayPath}: ${error instanceof Error ? error.message : String(error)}`, 'file_system_error')
  }
}

/** Awaits `operation`, rethrowing a failure as {@link fsToolError} about `displayPath`. */
export async function withFsToolError<T>(operation: Promise<T>, displayPath: string): Promise<T> {
  try {
    return await operation
  } catch (error) {
    throw fsToolError(error, displayPath)
  }
}
