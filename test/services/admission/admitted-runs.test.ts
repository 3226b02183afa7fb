import { describe, expect, it } from 'vitest'
import { countedRuns, queuedAhead } from '../../../services/admission/admitted-runs'
import type { AdmittedRun } from '../../../services/admission/admitted-runs'

const prompt = (sessionKey: string, invocationId: string): AdmittedRun => ({ sessionKey, invocationId, kind: 'prompt' })
const steering = (sessionKey: string, invocationId: string): AdmittedRun => ({ sessionKey, invocationId, kind: 'steering' })

describe('admitted runs', () => {
  it("counts each session's prompts, or one run for its steering while it has none", () => {
    expect(countedRuns([])).toBe(0)
    expect(countedRuns([prompt('t~a', 'i1'), prompt('t~a', 'i2'), steering('t~a', 'd1')])).toBe(2)
    expect(countedRuns([steering('t~b', 'd1'), steering('t~b', 'd2')])).toBe(1)
    expect(countedRuns([prompt('t~a', 'i1'), steering('t~b', 'd1'), prompt('t~c', 'i2')])).toBe(3)
  })

  it('says a run is queued when an invocation of its session is ahead of it', () => {
    const runs = [prompt('t~a', 'i1'), prompt('t~b', 'i2'), prompt('t~a', 'i3')]
    expect(queuedAhead(runs, 't~a')).toBe(true)
    expect(queuedAhead(runs, 't~c')).toBe(false)
    expect(queuedAhead(runs, 't~a', 'i1')).toBe(false)
    expect(queuedAhead(runs, 't~a', 'i3')).toBe(true)
    expect(queuedAhead(runs, 't~b', 'i-ended')).toBe(true)
    expect(queuedAhead([steering('t~a', 'd1')], 't~a')).toBe(true)
  })
})
