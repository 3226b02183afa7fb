import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** Thrown when a commit cannot be checked out or its dependencies installed; `code` is stable. */
export class CommitCheckoutError extends Error {
  readonly code = 'bench_commit_checkout_failed'
}

/** Where checkouts are kept between bench runs: a stable temporary folder, one subfolder per commit, and npm's cache. */
export const CHECKOUT_ROOT = path.join(tmpdir(), 'zidane-bench-commits')

const READY_MARKER = '.bench-ready'

/** Where checkouts go: one subfolder per commit under `root`, npm's download cache in `npmCache`. */
export interface CheckoutPlace { root: string; npmCache: string }

/** The bench's place: {@link CHECKOUT_ROOT}, with npm's cache inside it. */
export const DEFAULT_CHECKOUT_PLACE: CheckoutPlace = { root: CHECKOUT_ROOT, npmCache: path.join(CHECKOUT_ROOT, 'npm-cache') }

/** Runs `npm ci` in `folder` with this process's Node first on the PATH and npm's cache in `npmCache`. */
async function npmCi(folder: string, npmCache: string): Promise<void> {
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` }
  const child = spawn('npm', ['ci', '--no-audit', '--no-fund', '--cache', npmCache], { cwd: folder, env, stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => { errors = (errors + chunk.toString()).slice(-4_000) })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  if (code !== 0) throw new CommitCheckoutError(`npm ci in ${folder} exited ${String(code)}:\n${errors}`)
}

/**
 * The source of `commit` of the repository at `repoDir` in a folder of its own with its dependencies installed
 * (`git archive | tar -x`, then `npm ci`), kept under `place.root` so a later bench run reuses it. A folder
 * without the ready marker (an install cut short) is made again. Returns the folder and whether it was reused.
 */
export async function checkoutCommit(repoDir: string, commit: string, place: CheckoutPlace = DEFAULT_CHECKOUT_PLACE): Promise<{ folder: string; reused: boolean }> {
  const folder = path.join(place.root, commit)
  const marker = path.join(folder, READY_MARKER)
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === commit) return { folder, reused: true }
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  try {
    const archive = execFileSync('git', ['-C', repoDir, 'archive', commit], { maxBuffer: 512 * 1024 * 1024 })
    execFileSync('tar', ['-x', '-C', folder], { input: archive })
  } catch (error) {
    throw new CommitCheckoutError(`git archive ${commit} | tar -x failed`, { cause: error })
  }
  await npmCi(folder, place.npmCache)
  writeFileSync(marker, `${commit}\n`)
  return { folder, reused: false }
}
