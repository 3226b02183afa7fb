/**
 * The file's schema, one migration per version. Migrations are permanent: never edit a released one, append a new
 * one. Version 1 is the first layout; version 2 added process owners (lease and pid fencing), steering messages and
 * awakeable timeouts; version 3 keeps steps in one b-tree keyed by run (`WITHOUT ROWID`) and turns by a file-wide
 * rowid beside their `(session_id, turn_id)` index, so a step writes one page where it wrote three and a turn two
 * (see docs/design/sqlite-commits.md).
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE steps (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, value TEXT NOT NULL);
   CREATE INDEX steps_run ON steps(run_id);
   CREATE TABLE step_starts (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, owner TEXT NOT NULL, started_at INTEGER NOT NULL);
   CREATE INDEX step_starts_run ON step_starts(run_id);
   CREATE TABLE runs (run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, owner TEXT NOT NULL, status TEXT NOT NULL,
     suspended_cleanly INTEGER NOT NULL DEFAULT 0, claimed_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
   CREATE INDEX runs_session ON runs(session_id, status);
   CREATE INDEX runs_status ON runs(status);
   CREATE TABLE awakeables (id TEXT PRIMARY KEY, run_id TEXT, value TEXT, resolved_at INTEGER);
   CREATE INDEX awakeables_run ON awakeables(run_id);
   CREATE TABLE sessions (id TEXT PRIMARY KEY, status TEXT NOT NULL, header TEXT NOT NULL, updated_at INTEGER NOT NULL);
   CREATE TABLE turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, turn_id TEXT NOT NULL, turn TEXT NOT NULL,
     PRIMARY KEY (session_id, seq), UNIQUE (session_id, turn_id));
   CREATE TABLE tool_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  `CREATE TABLE owners (owner_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, started_at INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL);
   CREATE TABLE steering (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, text TEXT NOT NULL, created_at INTEGER NOT NULL, run_id TEXT);
   CREATE INDEX steering_session ON steering(session_id, run_id);
   ALTER TABLE awakeables ADD COLUMN timed_out INTEGER NOT NULL DEFAULT 0;`,
  `CREATE TABLE steps_v3 (run_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;
   INSERT OR REPLACE INTO steps_v3 (run_id, name, value) SELECT run_id, name, value FROM steps ORDER BY rowid;
   DROP TABLE steps;
   ALTER TABLE steps_v3 RENAME TO steps;
   CREATE TABLE turns_v3 (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, turn_id TEXT NOT NULL, turn TEXT NOT NULL, UNIQUE (session_id, turn_id));
   INSERT INTO turns_v3 (session_id, turn_id, turn) SELECT session_id, turn_id, turn FROM turns ORDER BY session_id, seq;
   DROP TABLE turns;
   ALTER TABLE turns_v3 RENAME TO turns;`,
]

/** The schema version this build writes: files at a lower version are migrated on open, higher versions are refused. */
export const SQLITE_SCHEMA_VERSION = SQLITE_MIGRATIONS.length
