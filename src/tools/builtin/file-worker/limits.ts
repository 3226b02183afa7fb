/** Most bytes of file text `read_file` returns in one call. */
export const READ_FILE_MAX_BYTES = 256 * 1024
/** Lines `read_file` returns when no `limit` is given. */
export const READ_FILE_DEFAULT_LIMIT = 2000
/** Longest line `read_file` returns; longer lines are cut and say so. */
export const READ_FILE_MAX_LINE_CHARS = 2000
/** Most matching lines `grep` returns. */
export const GREP_MAX_MATCHES = 500
/** Most bytes of output `grep` returns. */
export const GREP_MAX_OUTPUT_BYTES = 64 * 1024
/** Files larger than this are skipped by `grep`. */
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024
/** Most paths `glob` returns. */
export const GLOB_MAX_RESULTS = 1000
/** Most bytes of output `glob` returns: 1,000 paths near PATH_MAX would not fit the worker's reply. */
export const GLOB_MAX_OUTPUT_BYTES = 256 * 1024
/** Most entries `list_files` returns. */
export const LIST_FILES_MAX_ENTRIES = 1000
/** Largest file `edit_file` rewrites (it holds the file in memory twice). */
export const EDIT_FILE_MAX_BYTES = 16 * 1024 * 1024
/** Entries a recursive walk (`grep`, `glob`) visits at most; a hostile tree cannot make a call walk forever. */
export const WALK_MAX_ENTRIES = 100_000
/** Folder depth a recursive walk descends to at most. */
export const WALK_MAX_DEPTH = 64
/** Entries `list_files` reads from one folder at most before it stops (a folder with millions of entries). */
export const LIST_FILES_MAX_READ = 20_000
