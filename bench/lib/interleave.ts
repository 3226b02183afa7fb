/** A measurement taken once per round: returns the sample(s) of that round. */
export interface Probe {
  name: string
  measure(): Promise<number | number[]>
}

/**
 * Runs every probe once per round, rotating the order each round so no probe always follows the same one; the first
 * `warmupRounds` rounds are discarded. Returns each probe's samples in round order (index = round).
 */
export async function interleave(probes: readonly Probe[], warmupRounds: number, rounds: number): Promise<Map<string, number[][]>> {
  const samples = new Map<string, number[][]>(probes.map(probe => [probe.name, []]))
  for (let round = 0; round < warmupRounds + rounds; round++) {
    const offset = round % probes.length
    const order = [...probes.slice(offset), ...probes.slice(0, offset)]
    for (const probe of order) {
      const value = await probe.measure()
      if (round >= warmupRounds) samples.get(probe.name)?.push(Array.isArray(value) ? value : [value])
    }
  }
  return samples
}

/** All samples of `name`, flattened. */
export function flat(samples: Map<string, number[][]>, name: string): number[] {
  return (samples.get(name) ?? []).flat()
}

/** Per-round `combine(a, b)` of two single-valued probes (paired by round, so drift cancels). */
export function paired(samples: Map<string, number[][]>, left: string, right: string, combine: (left: number, right: number) => number): number[] {
  const lefts = samples.get(left) ?? []
  const rights = samples.get(right) ?? []
  return lefts.map((values, round) => combine(values[0] ?? Number.NaN, rights[round]?.[0] ?? Number.NaN))
}
