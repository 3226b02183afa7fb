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
 * Makes `kills` kills spread over `seconds` and returns them in order. At most one process of each kind is down at a
 * time (so never two Restate nodes): a kill picks among the kinds whose last victim answers again, and waits when
 * every kind is still restarting. Stops early when `shouldStop` says so.
 */
export async function runKills(cluster: RunningCluster, kills: number, seconds: number, random: () => number, shouldStop: () => boolean = () => false): Promise<KillRecord[]> {
  const records: KillRecord[] = []
  const restarting = new Map<KillKind, Promise<void>>()
  const intervalMs = kills > 0 ? (seconds * 1000) / kills : 0
  const started = Date.now()
  for (let index = 0; index < kills && !shouldStop(); index++) {
    const dueAt = started + index * intervalMs + random() * intervalMs * 0.5
    if (dueAt > Date.now()) await new Promise(resolve => setTimeout(resolve, dueAt - Date.now()))
    while (restarting.size === KINDS.length) await Promise.race(restarting.values())
    const { kind, target } = pickTarget(cluster, random, KINDS.filter(each => !restarting.has(each)))
    const done = killAndRestart(cluster, kind, target).then(record => { records.push(record) }).finally(() => restarting.delete(kind))
    restarting.set(kind, done)
  }
  await Promise.all(restarting.values())
  return records.sort((a, b) => a.at - b.at)
}
