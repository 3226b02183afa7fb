import type { AwakeableOutcome, DurableAwakeable, DurableRuntime } from '../durable/runtime'

const announcedByRuntime = new WeakMap<DurableRuntime, Set<string>>()

/**
 * Waits on an awakeable whose question a journaled step sent. When that step was replayed (an earlier process sent
 * the question) and no answer is there yet, `announceAgain` runs first, once per runtime instance (a process) and
 * awakeable: a resumed run tells its host again about the question it waits on.
 */
export async function waitAnnounced<T>(runtime: DurableRuntime, awakeable: DurableAwakeable<T>, sentLive: boolean, announceAgain: () => Promise<void>): Promise<AwakeableOutcome<T>> {
  const outcome = awakeable.wait()
  if (sentLive || !runtime.durable) return outcome
  const announced = announcedByRuntime.get(runtime) ?? new Set<string>()
  announcedByRuntime.set(runtime, announced)
  if (announced.has(awakeable.id) || await settlesAtOnce(outcome)) return outcome
  announced.add(awakeable.id)
  await announceAgain()
  return outcome
}

/** Whether `promise` settles before the event loop turns: an answer already recorded is read without waiting. */
function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  return new Promise(resolve => {
    const timer = setImmediate(() => resolve(false))
    const settled = (): void => { clearImmediate(timer); resolve(true) }
    void promise.then(settled, settled)
  })
}
