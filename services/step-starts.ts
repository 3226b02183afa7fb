/**
 * Left only for the two handlers that still pass `startLog: stepStartLog()` to `restateRuntime`: the start marks of
 * unsafe calls are gone (a journaled intent replaced them, see docs/design/crash-recovery.md), and `restateRuntime`
 * ignores the option. Delete this file with those two lines.
 */
export function stepStartLog(): undefined {
  return undefined
}
