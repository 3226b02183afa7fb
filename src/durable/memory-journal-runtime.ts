import { createMemorySessionStore } from '../session/memory-session-store'
import type { SessionStore, ToolStateStore } from '../session/types'
import { RunTakenOverError } from '../errors/zidane-error'
import type { JsonValue } from '../json'
import { createAwakeableRegistry } from './awakeable-registry'
import type { AwakeableRegistry } from './awakeable-registry'
import { createMemoryToolStateStore } from './memory-tool-state-store'
import type { DurableRuntime, InterruptedRun, RunLedger, StepKey } from './runtime'

interface RunEntry { sessionId: string; owner: string; status: string; suspendedCleanly: boolean }

/** A journal that outlives runtime instances, standing in for a file or a server: the "disk" of crash tests. */
export interface MemoryJournal {
  readonly steps: Map<string, JsonValue>
  /** Steps whose `execute` began (cleared when recorded): what a crash leaves behind. */
  readonly started: Set<string>
  readonly runs: Map<string, RunEntry>
  readonly liveOwners: Set<string>
  readonly awakeables: AwakeableRegistry
  readonly awaiting: Map<string, string>
  readonly sessionStore: SessionStore
  readonly toolStateStore: ToolStateStore
}

/** Creates an empty in-memory journal. */
export function createMemoryJournal(): MemoryJournal {
  return {
    steps: new Map(),
    started: new Set(),
    runs: new Map(),
    liveOwners: new Set(),
    awakeables: createAwakeableRegistry(),
    awaiting: new Map(),
    sessionStore: createMemorySessionStore(),
    toolStateStore: createMemoryToolStateStore(),
  }
}

/** Thrown by a crashed memory runtime: the simulated process is dead, nothing it does is recorded any more. */
export class SimulatedCrashError extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`)
    this.name = 'SimulatedCrashError'
  }
}

/** Options of the in-memory journaling runtime. `crashAt` names a step at which the simulated process dies. */
export interface MemoryJournalRuntimeOptions {
  journal: MemoryJournal
  /** Dies when a step whose name contains `step` starts (`'before'`) or after its `execute` ran but before it is recorded (`'during'`). */
  crashAt?: { step: string; when: 'before' | 'during' }
  maxConcurrentTools?: number
  /**
   * Run a turn of only safe calls inside the next model step, as the Restate runtime does (`RuntimeDefaults.deferSafeCalls`);
   * tool results are then capped at 1 MiB, as there, so a turn's results fit one record.
   */
  deferSafeCalls?: boolean
}

/** A memory runtime instance plus the switch that kills it. */
export interface MemoryJournalRuntime extends DurableRuntime {
  readonly owner: string
  /** Kills the simulated process: every later operation rejects with `SimulatedCrashError`. */
  crash(): void
  readonly crashed: boolean
}

/**
 * The in-memory journaling runtime: behaves like a durable runtime whose journal (`options.journal`) survives the
 * runtime. Create a second runtime on the same journal to play "the next process" after `crash()`.
 */
export function createMemoryJournalRuntime(options: MemoryJournalRuntimeOptions): MemoryJournalRuntime {
  const { journal } = options
  const owner = crypto.randomUUID()
  journal.liveOwners.add(owner)
  let crashed = false
  let crashPromiseReject: ((error: Error) => void) | undefined
  const dead = new Promise<never>((_resolve, reject) => { crashPromiseReject = reject })
  dead.catch(() => undefined)
  const live = new Set<string>()
  const guard = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, dead])

  const crash = (): void => {
    if (crashed) return
    crashed = true
    journal.liveOwners.delete(owner)
    crashPromiseReject?.(new SimulatedCrashError('(process killed)'))
  }

  const step = async <T>(key: StepKey, execute: (attempt: { resumed: boolean }) => Promise<T>): Promise<T> => {
    if (crashed) throw new SimulatedCrashError(`before ${key.name}`)
    if (journal.steps.has(key.name)) return structuredClone(journal.steps.get(key.name)) as T
    assertOwnerSync(journal, key.runId, owner)
    const resumed = journal.started.has(key.name)
    if (options.crashAt && key.name.includes(options.crashAt.step) && options.crashAt.when === 'before') { crash(); throw new SimulatedCrashError(`before ${key.name}`) }
    journal.started.add(key.name)
    live.add(key.runId)
    await Promise.resolve()
    const value = await guard(execute({ resumed }))
    if (options.crashAt && key.name.includes(options.crashAt.step) && options.crashAt.when === 'during') { crash(); throw new SimulatedCrashError(`during ${key.name}`) }
    if (crashed) throw new SimulatedCrashError(`during ${key.name}`)
    journal.steps.set(key.name, structuredClone(value) as JsonValue)
    journal.started.delete(key.name)
    return value
  }

  return {
    kind: 'memory',
    durable: true,
    owner,
    get crashed() { return crashed },
    crash,
    stores: { session: journal.sessionStore, toolState: journal.toolStateStore },
    defaults: { ...(options.maxConcurrentTools === undefined ? {} : { maxConcurrentTools: options.maxConcurrentTools }), ...(options.deferSafeCalls ? { deferSafeCalls: true, maxToolResultBytes: 1024 * 1024 } : {}) },
    runs: createMemoryLedger(journal, owner),
    step,
    now: async () => Date.now(),
    uuid: () => crypto.randomUUID(),
    awakeable<T>(key: StepKey, awakeableOptions: { timeoutMs?: number } = {}) {
      const id = `awk_${key.name}`
      journal.awaiting.set(key.runId, id)
      const awakeable = journal.awakeables.create<T>(id, awakeableOptions.timeoutMs)
      return { id, wait: () => guard(awakeable.wait()).finally(() => journal.awaiting.delete(key.runId)) }
    },
    resolveAwakeable: async (id, value) => { journal.awakeables.resolve(id, value) },
    all: promises => guard(Promise.all(promises)),
    race: promises => guard(Promise.race(promises)),
    allSettled: promises => guard(Promise.allSettled(promises)),
    sleep: ms => guard(new Promise<void>(resolve => setTimeout(resolve, ms))),
    isControlError: error => error instanceof SimulatedCrashError,
  }
}

function assertOwnerSync(journal: MemoryJournal, runId: string, owner: string): void {
  const entry = journal.runs.get(runId)
  if (entry && entry.owner !== owner && entry.status === 'running') throw new RunTakenOverError(runId)
}

function createMemoryLedger(journal: MemoryJournal, owner: string): RunLedger {
  const interruptedOf = (runId: string, entry: RunEntry): InterruptedRun => {
    const waiting = journal.awaiting.get(runId)
    return { sessionId: entry.sessionId, runId, waitingOnAwakeable: waiting !== undefined && journal.awakeables.valueOf(waiting) === undefined }
  }
  const isInterrupted = (entry: RunEntry): boolean => (entry.status === 'running' && !journal.liveOwners.has(entry.owner)) || entry.status === 'suspended'
  return {
    async claim(sessionId, runId, claimOptions = {}) {
      const entry = journal.runs.get(runId)
      if (entry && entry.status === 'running' && entry.owner !== owner && journal.liveOwners.has(entry.owner) && !claimOptions.takeOver) throw new RunTakenOverError(runId)
      if (entry?.suspendedCleanly) for (const name of journal.started) if (name.startsWith(`${runId}/`)) journal.started.delete(name)
      journal.runs.set(runId, { sessionId, owner, status: 'running', suspendedCleanly: false })
    },
    async release(_sessionId, runId, status) {
      const entry = journal.runs.get(runId)
      if (entry && entry.owner === owner) entry.status = status
    },
    async findInterrupted(sessionId) {
      for (const [runId, entry] of journal.runs) if (entry.sessionId === sessionId && isInterrupted(entry)) return interruptedOf(runId, entry)
      return null
    },
    async recoverInterruptedRuns() {
      return [...journal.runs].filter(([, entry]) => isInterrupted(entry)).map(([runId, entry]) => interruptedOf(runId, entry))
    },
    async assertOwner(_sessionId, runId) { assertOwnerSync(journal, runId, owner) },
    async markSuspended(_sessionId, runId) {
      const entry = journal.runs.get(runId)
      if (entry) entry.suspendedCleanly = true
    },
  }
}
