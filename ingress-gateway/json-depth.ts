/** How deeply a request body may nest arrays and objects; deeper bodies get 400 (they could not be forwarded). */
export const MAX_JSON_DEPTH = 64

/** Whether `value` nests arrays and objects deeper than `maxDepth` levels (checked without recursion). */
export function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const next = stack.pop()
    if (next === undefined || typeof next.value !== 'object' || next.value === null) continue
    if (next.depth >= maxDepth) return true
    for (const child of Object.values(next.value)) stack.push({ value: child, depth: next.depth + 1 })
  }
  return false
}
