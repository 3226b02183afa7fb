/**
 * The Restate node's counter of handler runs its invoker started: each invocation's first run, and each resume of one
 * that suspended. What a path costs Restate is mostly how many of these it makes.
 */
export const INVOKER_TASKS_COUNTER = 'restate_invoker_concurrency_slots_acquired'

/** Sum over its labels of the Prometheus counter `name` of the Restate node at `metricsUrl` (0 while it is not exported). */
export async function counterOf(metricsUrl: string, name: string): Promise<number> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) })
  if (!response.ok) throw new Error(`${metricsUrl} answered ${response.status}`)
  const lines = (await response.text()).split('\n').filter(line => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
  // A counter nothing has counted yet is not exported: 0.
  return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
}

/** Handler runs Restate's invoker started so far on the node of `metricsUrl` ({@link INVOKER_TASKS_COUNTER}). */
export function invokerTasks(metricsUrl: string): Promise<number> {
  return counterOf(metricsUrl, INVOKER_TASKS_COUNTER)
}
