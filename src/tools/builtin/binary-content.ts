import { open } from 'node:fs/promises'

/** How many leading bytes are checked for a NUL byte, the usual mark of a binary file. */
const BINARY_SNIFF_BYTES = 8192

/** True when the first bytes of `content` contain a NUL byte. */
export function looksBinary(content: Buffer): boolean {
  return content.subarray(0, BINARY_SNIFF_BYTES).includes(0)
}

/** {@link looksBinary} for a file, reading only its first bytes. */
export async function fileLooksBinary(absolutePath: string): Promise<boolean> {
  const handle = await open(absolutePath, 'r')
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES)
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0)
    return looksBinary(buffer.subarray(0, bytesRead))
  } finally {
    await handle.close()
  }
}
