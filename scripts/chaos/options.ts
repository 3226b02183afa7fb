/** Options of a chaos run (`npm run chaos -- --kills N --seconds N`). */
export interface ChaosOptions {
  /** Kills to make (default 200). */
  kills: number
  /**
   * Time over which the kills are spread (default 360 s); kills stop at 1.4 × this even when slow restarts left some
   * unmade, and the run then drains for at most `drainSeconds`.
   */
  seconds: number
  /** How long sessions still running after the last kill may take to finish (default 60 s). */
  drainSeconds: number
  /** Sessions kept running at once (default 6). */
  concurrency: number
  /** Seed of the random choices (default: from the clock); printed, so a run can be repeated. */
  seed: number
}

/** Thrown for an option that is not understood; its message says which. */
export class ChaosOptionError extends Error {
  readonly code = 'chaos_bad_option'
  constructor(message: string) {
    super(message)
    this.name = 'ChaosOptionError'
  }
}

/** The defaults: 200 kills, the whole run bounded under 10 minutes (cluster start, 1.4 × 360 s of kills, 60 s drain). */
export const DEFAULT_CHAOS_OPTIONS: ChaosOptions = { kills: 200, seconds: 360, drainSeconds: 60, concurrency: 6, seed: 0 }

const NAMES: Record<string, keyof ChaosOptions> = { '--kills': 'kills', '--seconds': 'seconds', '--drain-seconds': 'drainSeconds', '--concurrency': 'concurrency', '--seed': 'seed' }

/** Parses `--kills N --seconds N --drain-seconds N --concurrency N --seed N`; throws {@link ChaosOptionError}. */
export function parseChaosOptions(argv: readonly string[], seed = Date.now() % 1_000_000): ChaosOptions {
  const options: ChaosOptions = { ...DEFAULT_CHAOS_OPTIONS, seed }
  for (let index = 0; index < argv.length; index += 2) {
    const name = NAMES[argv[index] ?? '']
    const value = Number(argv[index + 1])
    if (!name) throw new ChaosOptionError(`unknown option ${argv[index] ?? ''} (known: ${Object.keys(NAMES).join(', ')})`)
    if (!Number.isInteger(value) || value < 0) throw new ChaosOptionError(`${argv[index] ?? ''} needs a whole number, got ${argv[index + 1] ?? 'nothing'}`)
    options[name] = value
  }
  if (options.concurrency < 1) throw new ChaosOptionError('--concurrency must be at least 1')
  return options
}

/** A small deterministic random generator (mulberry32), so a seed repeats a run's choices. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let value = state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }
}
