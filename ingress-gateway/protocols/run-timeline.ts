import type { TimelineItem } from './timeline-items'

/** Where a timeline starts reading the durable log, and when it gives up. */
export interface FollowOptions {
  /** Durable events with `seq > after` are read (0: from the session's first event). */
  after: number
  /** Aborts the follow: the iterator ends (a client left, or the protocol ended its stream). */
  signal: AbortSignal
}

/** The active (or latest) top-level run of a session, and where its `run:start` sits in the log. */
export interface RunPosition {
  runId: string
  /** `seq` of the run's `run:start` event: follow with `after: startSeq - 1` to replay the run from its start. */
  startSeq: number
  /** Whether the run has ended (a `run:end` was read). */
  ended: boolean
}

/** The session activity feed both chat protocols map (see {@link TimelineItem}). Built once per gateway. */
export interface RunTimeline {
  /** The items of session `key` from its durable event `after` on, live deltas included, until `signal` aborts. */
  follow(key: string, options: FollowOptions): AsyncIterable<TimelineItem>
  /** How many durable events the session's log holds now (0 for a session without events). */
  eventCount(key: string): Promise<number>
  /** The latest top-level run of the session and where it starts in the log; undefined when it never ran. */
  latestRun(key: string): Promise<RunPosition | undefined>
}
