import { createRequire } from 'node:module'
import { arch, platform } from 'node:os'
import { join } from 'node:path'

/**
 * The path of the restate-server executable the npm package ships for this platform. Run it directly: the
 * `node_modules/.bin/restate-server` wrapper is a Node process in between, so killing the wrapper would orphan the
 * server (still holding its ports and data). Falls back to the wrapper when the platform package is missing.
 */
export function restateServerBinary(rootDir: string = process.cwd()): string {
  const require = createRequire(join(rootDir, 'package.json'))
  try {
    return require.resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`)
  } catch {
    return join(rootDir, 'node_modules', '.bin', 'restate-server')
  }
}
