import * as clients from '@restatedev/restate-sdk-clients'
import { hasValidProof, isHubUrl } from '../services/live/replica-proof'
import { LIVE_REPLICAS_KEY, liveReplicasInterface } from '../contract/live-replicas'
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
  /** Restate's ingress (the gateway's `RESTATE_INGRESS_URL`), where `live_replicas/hubs/list` is read. */
  ingressUrl: string
  /** The live token: only the hubs registered with its proof are followed. */
  token: string
  /** How often the list is read again while a session is followed (`ZIDANE_LIVE_REFRESH_MS`, default 5000). */
  refreshMs?: number
  /** Told about a failed read (the last list is kept) and, once while it stays registered, about a hub left out for its proof or URL. */
  onError?: (error: unknown) => void
  /** Reads the registry; default the typed ingress client. Tests plug in their own. */
  read?: () => Promise<LiveReplica[]>
}

/** Default of {@link DiscoveredReplicasOptions.refreshMs}. */
export const DEFAULT_LIVE_REFRESH_MS = 5_000
/** How often the registry is read while it lists no hub. */
const EMPTY_REFRESH_MS = 500

/**
 * The hubs the services replicas registered in Restate (`live_replicas`), read through the ingress with the shared
 * `list` handler: at once when the first session is followed, then every `refreshMs` (every 500 ms while it lists
 * none) while any is, never while none is. Only a hub whose registration carries the proof made with the live token,
 * at an http(s) URL, is listed; a read that fails keeps the last list.
 */
export function discoveredReplicas(options: DiscoveredReplicasOptions): LiveReplicaDirectory {
  const read = options.read ?? registryReader(options.ingressUrl)
  const refreshMs = options.refreshMs ?? DEFAULT_LIVE_REFRESH_MS
  const listeners = new Set<(urls: readonly string[]) => void>()
  let known: readonly string[] = []
  // The registrations left out at the last read: each is told of once, not at every read (every 500 ms while none is trusted).
  let refused = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let reading = false
  const refresh = async (): Promise<void> => {
    reading = true
    try {
      const left = new Set<string>()
      const urls = trustedUrls(await read(), options.token, url => left.add(url))
      for (const url of left) if (!refused.has(url)) options.onError?.(new Error(`ignoring the live hub registered as ${url}: its registration does not carry the live token's proof`))
      refused = left
      if (urls.join('\n') !== known.join('\n')) {
        known = urls
        for (const listener of listeners) listener(urls)
      }
    } catch (error) {
      options.onError?.(error)
    }
    reading = false
    // Knowing no hub is how a gateway starts beside replicas still registering: it asks again sooner.
    if (listeners.size > 0) timer = setTimeout(() => { void refresh() }, known.length === 0 ? Math.min(refreshMs, EMPTY_REFRESH_MS) : refreshMs)
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
      }
    },
  }
}

function registryReader(ingressUrl: string): () => Promise<LiveReplica[]> {
  const registry = clients.connect({ url: ingressUrl }).client(liveReplicasInterface, LIVE_REPLICAS_KEY)
  return async () => registry.list(clients.rpc.opts({ timeout: 5_000 }))
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
