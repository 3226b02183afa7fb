import * as clients from '@restatedev/restate-sdk-clients'
import { hasValidProof, isHubUrl } from '../services/live/replica-proof'
import { liveReplicasWatchInterface, registryVersion } from '../contract/live-replicas'
import type { LiveReplica } from '../contract/live-replicas'

/** Where the services replicas' live hubs are: a fixed list, or the registry in Restate, kept fresh while watched. */
export interface LiveReplicaDirectory {
  /** The hub URLs known now. */
  urls(): readonly string[]
  /** Calls `listener` with the URLs each time they change, keeping them fresh while anyone watches; returns the unwatch. */
  watch(listener: (urls: readonly string[]) => void): () => void
}

/** A directory that never changes (`ZIDANE_LIVE_URLS`). */
export function fixedReplicas(urls: readonly string[]): LiveReplicaDirectory {
  return { urls: () => urls, watch: () => () => undefined }
}

/** Options of {@link discoveredReplicas}. */
export interface DiscoveredReplicasOptions {
  /** Restate's ingress (the gateway's `RESTATE_INGRESS_URL`), where the registry is watched. */
  ingressUrl: string
  /** The live token: only the hubs registered with its proof are followed. */
  token: string
  /**
   * Longest wait of one parked watch of the registry (`ZIDANE_LIVE_REFRESH_MS`, default 60000): a change comes at once,
   * and the list is read again at least this often while a session is followed (a lease that ran out changes nothing
   * in the registry, so nothing wakes the watch for it).
   */
  refreshMs?: number
  /** Shortest time between two reads (default 200 ms): a registry that changes at every read is not read in a loop. */
  minIntervalMs?: number
  /** Wait before reading again after a failed read (default 1000 ms); the last list is kept meanwhile. */
  retryMs?: number
  /** Told about a failed read (the last list is kept) and, once while it stays registered, about a hub left out for its proof or URL. */
  onError?: (error: unknown) => void
  /**
   * Reads the registry once it is not `known` (a {@link registryVersion}), or at once; null when nothing changed within
   * its wait. Default: a parked `live_replicas_watch/wait` through the typed ingress client. Tests plug in their own.
   */
  read?: (known: string, timeoutMs: number) => Promise<LiveReplica[] | null>
}

/** Default of {@link DiscoveredReplicasOptions.refreshMs}. */
export const DEFAULT_LIVE_REFRESH_MS = 60_000
const DEFAULT_MIN_INTERVAL_MS = 200
const DEFAULT_RETRY_MS = 1_000

/**
 * The hubs the services replicas registered in Restate (`live_replicas`), kept by a watch parked in Restate while any
 * session is followed, never while none is: the registry wakes it when a replica registers, leaves or restarts, so a
 * gateway following sessions costs no invocation while nothing changes but one renewal per `refreshMs`. Only a hub
 * whose registration carries the proof made with the live token, at an http(s) URL, is listed; a read that fails
 * keeps the last list.
 */
export function discoveredReplicas(options: DiscoveredReplicasOptions): LiveReplicaDirectory {
  const read = options.read ?? registryWatcher(options.ingressUrl)
  const refreshMs = options.refreshMs ?? DEFAULT_LIVE_REFRESH_MS
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS
  const listeners = new Set<(urls: readonly string[]) => void>()
  let known: readonly string[] = []
  // What the registry held at the last read (every registration, trusted or not): the watch waits for another.
  let version: string | undefined
  // The registrations left out at the last read: each is told of once, not at every read.
  let refused = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let reading = false
  const take = (replicas: readonly LiveReplica[]): void => {
    version = registryVersion(replicas)
    const left = new Set<string>()
    const urls = trustedUrls(replicas, options.token, url => left.add(url))
    for (const url of left) if (!refused.has(url)) options.onError?.(new Error(`ignoring the live hub registered as ${url}: its registration does not carry the live token's proof`))
    refused = left
    if (urls.join('\n') === known.join('\n')) return
    known = urls
    for (const listener of listeners) listener(urls)
  }
  const refresh = async (): Promise<void> => {
    reading = true
    timer = undefined
    const startedMs = performance.now()
    let delayMs = 0
    try {
      // The first read of a spell asks at once (nothing is known to wait past).
      const replicas = await read(version ?? '\u0000', refreshMs)
      if (replicas !== null) take(replicas)
    } catch (error) {
      options.onError?.(error)
      delayMs = retryMs
    }
    reading = false
    if (listeners.size === 0) { version = undefined; return }
    delayMs = Math.max(delayMs, minIntervalMs - (performance.now() - startedMs))
    timer = setTimeout(() => { void refresh() }, Math.max(0, delayMs))
  }
  return {
    urls: () => known,
    watch(listener) {
      listeners.add(listener)
      if (listeners.size === 1 && timer === undefined && !reading) void refresh()
      return () => {
        listeners.delete(listener)
        if (listeners.size > 0) return
        clearTimeout(timer)
        timer = undefined
        version = undefined
      }
    },
  }
}

/** Parks `live_replicas_watch/wait` through the typed ingress client, with room past its own timeout. */
function registryWatcher(ingressUrl: string): (known: string, timeoutMs: number) => Promise<LiveReplica[] | null> {
  const watch = clients.connect({ url: ingressUrl }).client(liveReplicasWatchInterface)
  return async (known, timeoutMs) => watch.wait({ known, timeoutMs }, clients.rpc.opts({ timeout: timeoutMs + 15_000 }))
}

/** The sorted, distinct URLs of the replicas whose claim the live token proves; `refuse` is given the others'. */
function trustedUrls(replicas: readonly LiveReplica[], token: string, refuse: (url: string) => void): string[] {
  const urls = new Set<string>()
  for (const replica of replicas) {
    if (isHubUrl(replica.url) && hasValidProof(token, replica)) urls.add(replica.url.replace(/\/+$/, ''))
    else refuse(String(replica.url))
  }
  return [...urls].sort()
}
