import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GATEWAY_ERROR_CODES } from '../../ingress-gateway/errors'

const doc = readFileSync(new URL('../../ingress-gateway/ERRORS.md', import.meta.url), 'utf8')

function documentedCodes(): Record<string, number> {
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)]
  return Object.fromEntries(rows.map((row) => [row[1], Number(row[2])]))
}

describe('ERRORS.md', () => {
  it('documents exactly the codes and statuses of GATEWAY_ERROR_CODES', () => {
    const listed = Object.fromEntries(Object.entries(GATEWAY_ERROR_CODES).map(([code, { status }]) => [code, status]))
    expect(documentedCodes()).toEqual(listed)
  })

  it('gives every code a description', () => {
    for (const { description } of Object.values(GATEWAY_ERROR_CODES)) expect(description.length).toBeGreaterThan(10)
  })
})
