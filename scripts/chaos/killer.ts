import type { RunningCluster } from '../cluster/start-cluster'

/** What a kill hits: a services replica, a gateway, or one Restate node. */
export type KillKind = 'services' | 'gateway' | 'restate'

/** One kill: when, whom, and how long the process took to answer again after its restart. */
export interface KillRecord {
  kind: KillKind
  target: string
  at: number
  /** Milliseconds from the kill until the restarted process answered its health check (undefined: it never did). */
  backAfterMs?: number
}

const KINDS: readonly KillKind[] = ['services', 'gateway', 'restate']

/** The processes of each kind in `cluster` (by their supervised names). */
function targetsOf(cluster: RunningCluster, kind: KillKind): string[] {
  const prefix = kind === 'restate' ? 'restate-' : `${kind}-`
  return cluster.processes.map(handle => handle.name).filter(name => name.startsWith(prefix))
}

/**
 * SIGKILLs the process `target` and restarts it at once (the supervisor's own restart is replaced, so its growing
 * backoff does not stretch a long run), then waits until it answers its health check.
 */
export async function killAndRestart(cluster: RunningCluster, kind: KillKind, target: string, healthTimeoutMs = 120_000): Promise<KillRecord> {
  const handle = cluster.process(target)
  const child = handle.current()
  const record: KillRecord = { kind, target, at: Date.now() }
  if (!child || child.exitCode !== null || child.signalCode !== null) return record
  // The supervisor's exit listener (registered first) schedules its restart; restart() then cancels it and starts now.
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  child.kill('SIGKILL')
  await exited
  handle.restart()
  await cluster.waitHealthy(target, healthTimeoutMs).then(() => { record.backAfterMs = Date.now() - record.at }, () => undefined)
  return record
}

/** Picks the next kill among the kinds in `kinds`: a kind, then one process of that kind, uniformly with `random`. */
export function pickTarget(cluster: RunningCluster, random: () => number, kinds: readonly KillKind[] = KINDS): { kind: KillKind; target: string } {
  const kind = kinds[Math.floor(random() * kinds.length)] ?? 'services'
  const targets = targetsOf(cluster, kind)
  return { kind, target: targets[Math.floor(random() * targets.length)] ?? `${kind}-1` }
}

/**
 * How long a Restate node must have been back before the next node is killed: its log server rejoins the nodesets and
 * partition leadership settles. Killing nodes faster than that leaves log segments with one live copy, and the
 * cluster waits (for minutes, measured) until reconfiguration completes: a failure rate no real cluster sees.
 */
export const RESTATE_KILL_SPACING_MS = 10_000

/**
 * Makes `kills` kills spread over `seconds` and returns them in order. At most one process of each kind is down at a
 * time (so never two Restate nodes), and a Restate node is killed only {@link RESTATE_KILL_SPACING_MS} after the last
 * one came back: a kill picks among the kinds that are ready, and waits when none is. Stops early when `shouldStop`
 * says so.
 */
export async function runKills(cluster: RunningCluster, kills: number, seconds: number, random: () => number, shouldStop: () => boolean = () => false): Promise<KillRecord[]> {
  const records: KillRecord[] = []
  // Bounded: on a loaded machine restarts are slow and fewer kills fit; the run stops killing at 1.4 × `seconds`.
  const stopAt = Date.now() + seconds * 1400
  const restarting = new Map<KillKind, Promise<void>>()
  let restateReadyAt = 0
  const ready = (): KillKind[] => KINDS.filter(kind => !restarting.has(kind) && (kind !== 'restate' || Date.now() >= restateReadyAt))
  const intervalMs = kills > 0 ? (seconds * 1000) / kills : 0
  const started = Date.now()
  for (let index = 0; index < kills && !shouldStop() && Date.now() < stopAt; index++) {
    const dueAt = started + index * intervalMs + random() * intervalMs * 0.5
    if (dueAt > Date.now()) await new Promise(resolve => setTimeout(resolve, dueAt - Date.now()))
    while (ready().length === 0 && Date.now() < stopAt) await Promise.race([...restarting.values(), new Promise(resolve => setTimeout(resolve, 250))])
    if (ready().length === 0) break
    const { kind, target } = pickTarget(cluster, random, ready())
    const done = killAndRestart(cluster, kind, target).then(record => {
      records.push(record)
      if (kind === 'restate') restateReadyAt = Date.now() + RESTATE_KILL_SPACING_MS
    }).finally(() => restarting.delete(kind))
    restarting.set(kind, done)
  }
  await Promise.all(restarting.values())
  return records.sort((a, b) => a.at - b.at)
}
