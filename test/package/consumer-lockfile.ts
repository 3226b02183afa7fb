/**
 * A package-lock for a consumer project that depends on the packed zidane tarball, built from this repository's own
 * lock: every dependency (and the Restate SDK peer) at the version and integrity the repository installed, so
 * `npm ci --offline` can install it from the local npm cache without asking the registry.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

interface LockEntry { version?: string; integrity?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; [key: string]: unknown }
interface Lock { packages: Record<string, LockEntry> }

/** Where Node would find `name` from the package installed at `from` (`node_modules/a/node_modules/b` style). */
function locate(packages: Lock['packages'], from: string, name: string): string | undefined {
  let base = from
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`
    if (packages[candidate] !== undefined) return candidate
    if (base === '') return undefined
    const cut = base.lastIndexOf('/node_modules/')
    base = cut < 0 ? '' : base.slice(0, cut)
  }
}

/** The lock entries reachable from `roots`, copied without the repository's dev/peer markers. */
function closure(packages: Lock['packages'], roots: string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {}
  const queue = roots.map(name => ({ from: '', name }))
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const location = locate(packages, item.from, item.name)
    if (location === undefined || out[location] !== undefined) continue
    const { dev: _dev, peer: _peer, devOptional: _devOptional, ...entry } = packages[location] as LockEntry
    out[location] = entry
    for (const dependency of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) queue.push({ from: location, name: dependency })
  }
  return out
}

/** package.json and package-lock.json texts of a consumer project depending on `tarballName` (next to them). */
export function consumerProject(repositoryRoot: string, tarballName: string): { manifest: string; lock: string } {
  const repositoryLock = JSON.parse(readFileSync(join(repositoryRoot, 'package-lock.json'), 'utf8')) as Lock
  const repositoryManifest = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; peerDependencies: Record<string, string>; bin: Record<string, string> }
  const sdkVersion = repositoryLock.packages['node_modules/@restatedev/restate-sdk']?.version ?? ''
  const dependencies = { '@restatedev/restate-sdk': sdkVersion, zidane: `file:${tarballName}` }
  const libraryDependencies = { ...repositoryManifest.dependencies }
  const installed = closure(repositoryLock.packages, [...Object.keys(libraryDependencies), '@restatedev/restate-sdk'])
  const zidaneEntry = { version: repositoryManifest.version, resolved: `file:${tarballName}`, dependencies: libraryDependencies, peerDependencies: repositoryManifest.peerDependencies, bin: repositoryManifest.bin, engines: { node: '>=22' } }
  const lock = { name: 'consumer', lockfileVersion: 3, requires: true, packages: { '': { name: 'consumer', dependencies }, 'node_modules/zidane': zidaneEntry, ...installed } }
  const manifest = { name: 'consumer', private: true, type: 'module', dependencies }
  return { manifest: `${JSON.stringify(manifest, null, 2)}\n`, lock: `${JSON.stringify(lock, null, 2)}\n` }
}
