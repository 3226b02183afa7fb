/**
 * How much partition-leader work a node did, from its Prometheus metrics (`<fabric URL>/metrics`): the sum of
 * `restate_partition_handle_leader_action_total`. A node that leads no partition reports 0, so the numbers show
 * how the cluster controller spread the partitions' leaders over the nodes.
 */
export async function leaderActions(fabricUrl: string): Promise<number> {
  const response = await fetch(`${fabricUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })
  if (!response.ok) return 0
  let total = 0
  for (const line of (await response.text()).split('\n')) {
    if (!line.startsWith('restate_partition_handle_leader_action_total')) continue
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (Number.isFinite(value)) total += value
  }
  return total
}
