/**
 * The durable names and shapes of the session index: one `session_index` virtual object per tenant (key: the tenant
 * id, the part of a session key before `~`) lists the tenant's sessions by last activity. Each session object updates
 * it with journaled one-way sends (a run's start and end, a question listed or answered); the gateway lists it through
 * the shared `list` handler. Names and state keys are in journals: never rename them.
 */

/** Name of the session index virtual object. Durable: never rename. */
export const SESSION_INDEX_SERVICE = 'session_index'
/** State key of the index's {@link SessionIndexDirectory}. Durable: never rename. */
export const SESSION_INDEX_DIRECTORY_KEY = 'directory'
/** Prefix of the pages of entries: `page:<first position>` holds a {@link SessionIndexEntry} list. Durable: never rename. */
export const SESSION_INDEX_PAGE_PREFIX = 'page:'
/** Prefix of the position of each session: `at:<session id>` holds its entry's `seq`. Durable: never rename. */
export const SESSION_INDEX_POSITION_PREFIX = 'at:'

/** One session as the index lists it: compact, about 130 bytes of JSON. */
export interface SessionIndexEntry {
  /** The session id the gateway took (the part of the key after `~`). */
  id: string
  /** The entry's position: the index's counter at its last move, larger for newer activity. Never reused. */
  seq: number
  /** `running` from a run's start; the session's status (`completed`, `failed`, `cancelled`, …) from its end. */
  status: string
  /**
   * Last activity: durable time (ms) of the run's start or end, or of a question listed; raised to the newest the index
   * already listed when sends arrive out of order (by a few ms), so the list's order and its times agree.
   */
  lastActivityAt: number
  createdAt: number
  turns: number
  costUsd: number
  /** Questions and approvals waiting for an answer. */
  pending: number
}

/**
 * Input of `session_index/<tenant>/update` (exclusive, sent one-way by the session object). With `lastActivityAt` the
 * entry moves to the head (a new `seq`); without it the fields change in place. Fields left out keep their value.
 */
export interface SessionIndexUpdate {
  id: string
  status?: string
  lastActivityAt?: number
  turns?: number
  costUsd?: number
  pending?: number
}

/**
 * Input of the shared `session_index/<tenant>/list`: entries with `seq < before` (all when absent), newest first, at
 * most `limit`, only those whose status is in `status` when given.
 */
export interface SessionIndexListRequest {
  before?: number
  limit: number
  status?: string[]
}

/**
 * Output of `list`: the entries, and where the next page starts (`before` of the next request), or null at the end.
 * A page may hold fewer than `limit` entries and still have a next one (a filter that matched little in the pages read).
 */
export interface SessionIndexPage {
  entries: SessionIndexEntry[]
  nextBefore: number | null
}

/** Input of `session_index/<tenant>/remove` (exclusive): drops the session's entry (its deletion). */
export interface SessionIndexRemoveRequest { id: string }

/**
 * Input of the internal `expire` (exclusive, sent to itself with the retention's delay): the entry's position when it
 * was sent, and the activity's own durable time (the session's erase checks no run started after it).
 */
export interface SessionIndexExpireRequest { id: string; seq: number; idleSince?: number }

/**
 * The index's directory: the next position to give, and its pages, oldest first, each as `[first position, entries]`.
 * Page `i` holds the entries whose `seq` is in `[first_i, first_{i+1})`.
 */
export interface SessionIndexDirectory {
  next: number
  pages: [number, number][]
  /** The newest `lastActivityAt` the index gave. */
  latest?: number
}

/**
 * Input of `session/<key>/erase` (exclusive): removes the session, its log, inbox, questions, index entry and
 * workspace. With `idleSince` (the retention's check) it removes nothing when the session ran after that time or
 * records a run as running.
 */
export interface EraseSessionRequest { idleSince?: number }

/** Output of `session/<key>/erase`: whether the session existed, and whether it was erased (not kept as active). */
export interface EraseSessionResult { existed: boolean; erased: boolean }

/** Input of `resumer/<awakeableId>/erase`: clears the question when it belongs to `sessionKey` (the session being erased). */
export interface EraseQuestionRequest { sessionKey: string }
