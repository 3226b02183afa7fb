/** Sizes of one bench run; `--quick` shrinks them to fit in under 2 minutes, the full run fits in under 10. */
export interface BenchOptions {
  quick: boolean
  /** `--only 8,10`: the sections to run (by their number); empty runs them all. */
  only: number[]
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
  /**
   * Section 12: sessions running at once, each followed by a viewer, tool turns of each run and its model's delay per
   * turn, and rounds (each runs both event-log designs once).
   */
  eventLatency: { sessions: number; toolTurns: number; modelDelayMs: number; rounds: number }
  /** Section 8: sessions streaming at once, tokens each, and the model server's interval between tokens. */
  live: { sessions: number; tokens: number; intervalMs: number }
  /**
   * Section 10: turns the long session grows to, warm-up and measured rounds of the one-turn runs, runs of the header
   * session (at most `headerRunsInFlight` queued at once), idle viewers and the sessions they watch, and the idle window.
   */
  sessionLog: { longTurns: number; warmupRounds: number; rounds: number; headerRuns: number; headerRunsInFlight: number; viewers: number; viewerSessions: number; idleWindowMs: number }
  /**
   * Section 11: how long the quiet baseline lasts and how long tenant B keeps repeating each attack (at least; a
   * round under way finishes), and tenant A's steady load: a session read every `readIntervalMs`, a `hello` run every
   * `promptIntervalMs`.
   */
  hostile: { baselineMs: number; attackMs: number; readIntervalMs: number; promptIntervalMs: number }
  /**
   * Section 14 (opt-in): sessions of each batch, `write:` lines of each prompt (tool turns; one more turn answers), the
   * fixed arrival rate of the paced batches, and warm-up and measured rounds (each runs both batches on both stacks).
   */
  baseline: { sessions: number; writeLines: number; pacedPerMinute: number; warmupRounds: number; rounds: number }
}

/** The section numbers after `--only` (`--only 10`, `--only 8,10`, `--only 8 --only 10`). */
function onlySections(argv: readonly string[]): number[] {
  return argv.flatMap((argument, index) => (argument === '--only' ? (argv[index + 1] ?? '').split(',') : [])).map(Number).filter(Number.isInteger)
}

/** The sizes for `argv` (`--quick` or not) and the sections `--only` selects. */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick')
  return {
    quick,
    only: onlySections(argv),
    instant: quick ? { toolTurns: 20, warmupRounds: 3, rounds: 12, commitsPerRound: 40 } : { toolTurns: 20, warmupRounds: 5, rounds: 40, commitsPerRound: 50 },
    realistic: quick ? { toolTurns: 10, modelDelayMs: 20, warmupRounds: 1, rounds: 6, bareSteps: 50 } : { toolTurns: 10, modelDelayMs: 20, warmupRounds: 2, rounds: 20, bareSteps: 100 },
    kills: quick ? 10 : 20,
    sessions: quick ? { count: 40, pacedCount: 30, writeLines: 9 } : { count: 150, pacedCount: 100, writeLines: 9 },
    sqlite: quick ? { runs: 10_000, runsPerSession: 10, opens: 500, largeRounds: 3 } : { runs: 10_000, runsPerSession: 10, opens: 2000, largeRounds: 8 },
    largeOutputs: quick ? { rounds: 2, watchMs: 3000 } : { rounds: 5, watchMs: 5000 },
    live: quick ? { sessions: 20, tokens: 50, intervalMs: 20 } : { sessions: 20, tokens: 200, intervalMs: 20 },
    eventLatency: quick ? { sessions: 20, toolTurns: 5, modelDelayMs: 400, rounds: 2 } : { sessions: 20, toolTurns: 5, modelDelayMs: 400, rounds: 6 },
    sessionLog: quick
      ? { longTurns: 1000, warmupRounds: 3, rounds: 6, headerRuns: 200, headerRunsInFlight: 4, viewers: 500, viewerSessions: 100, idleWindowMs: 20_000 }
      : { longTurns: 5000, warmupRounds: 3, rounds: 12, headerRuns: 1000, headerRunsInFlight: 4, viewers: 500, viewerSessions: 100, idleWindowMs: 60_000 },
    hostile: quick ? { baselineMs: 6_000, attackMs: 6_000, readIntervalMs: 250, promptIntervalMs: 500 } : { baselineMs: 12_000, attackMs: 12_000, readIntervalMs: 250, promptIntervalMs: 500 },
    baseline: quick ? { sessions: 60, writeLines: 9, pacedPerMinute: 1200, warmupRounds: 0, rounds: 2 } : { sessions: 60, writeLines: 9, pacedPerMinute: 1200, warmupRounds: 1, rounds: 5 },
  }
}
