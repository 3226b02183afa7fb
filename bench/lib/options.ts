/** Sizes of one bench run; `--quick` shrinks them to fit in under 2 minutes, the full run fits in under 10. */
export interface BenchOptions {
  quick: boolean
  /** Section 1–2: tool turns of the instant-model run, and its warm-up and measured rounds. */
  instant: { toolTurns: number; warmupRounds: number; rounds: number; commitsPerRound: number }
  /** Section 3: the run at realistic model latency. */
  realistic: { toolTurns: number; modelDelayMs: number; warmupRounds: number; rounds: number; bareSteps: number }
  /** Section 4: SIGKILLs of the services process. */
  kills: number
  /** Section 5: sessions started at once through the full stack, sessions arriving at 200/min, and tool turns each (plus the final turn). */
  sessions: { count: number; pacedCount: number; writeLines: number }
  /** Section 6: runs in the big SQLite file, session opens timed, 5 MB runs per variant. */
  sqlite: { runs: number; runsPerSession: number; opens: number; largeRounds: number }
  /** Section 7: runs of the 5 MB tool output on Restate, and how long the 40 MB invocation is watched. */
  largeOutputs: { rounds: number; watchMs: number }
  /** Section 8: sessions streaming at once, tokens each, and the model server's interval between tokens. */
  live: { sessions: number; tokens: number; intervalMs: number }
}

/** The sizes for `argv` (`--quick` or not). */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick')
  return {
    quick,
    instant: quick ? { toolTurns: 20, warmupRounds: 3, rounds: 12, commitsPerRound: 40 } : { toolTurns: 20, warmupRounds: 5, rounds: 40, commitsPerRound: 50 },
    realistic: quick ? { toolTurns: 10, modelDelayMs: 20, warmupRounds: 1, rounds: 6, bareSteps: 50 } : { toolTurns: 10, modelDelayMs: 20, warmupRounds: 2, rounds: 20, bareSteps: 100 },
    kills: quick ? 10 : 20,
    sessions: quick ? { count: 40, pacedCount: 30, writeLines: 9 } : { count: 150, pacedCount: 100, writeLines: 9 },
    sqlite: quick ? { runs: 10_000, runsPerSession: 10, opens: 500, largeRounds: 3 } : { runs: 10_000, runsPerSession: 10, opens: 2000, largeRounds: 8 },
    largeOutputs: quick ? { rounds: 2, watchMs: 3000 } : { rounds: 5, watchMs: 5000 },
    live: quick ? { sessions: 20, tokens: 50, intervalMs: 20 } : { sessions: 20, tokens: 200, intervalMs: 20 },
  }
}
