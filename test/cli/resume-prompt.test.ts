import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { askYesNo, shouldAskToResume } from '../../src/cli/ask-yes-no'

function streams(): { input: PassThrough; output: PassThrough; written: () => string } {
  const input = new PassThrough()
  const output = new PassThrough()
  let text = ''
  output.on('data', chunk => { text += String(chunk) })
  return { input, output, written: () => text }
}

describe('the resume-ask prompt', () => {
  it('asks until it gets y or n', async () => {
    const io = streams()
    const answer = askYesNo('Resume it?', io)
    io.input.write('maybe\n')
    io.input.write('Y\n')
    expect(await answer).toBe(true)
    expect(io.written()).toBe('Resume it? (y/n) Please answer y or n: ')
  })

  it('takes no and an ended input as no', async () => {
    const io = streams()
    const answer = askYesNo('Resume it?', io)
    io.input.write('no\n')
    expect(await answer).toBe(false)
    const closed = streams()
    const eof = askYesNo('Resume it?', closed)
    closed.input.end()
    expect(await eof).toBe(false)
  })

  it('asks only under resume-ask, in text mode, on a terminal', () => {
    expect(shouldAskToResume('resume-ask', 'text', true)).toBe(true)
    expect(shouldAskToResume('resume-ask', 'json', true)).toBe(false)
    expect(shouldAskToResume('resume-ask', 'stream-json', true)).toBe(false)
    expect(shouldAskToResume('resume-ask', 'text', false)).toBe(false)
    expect(shouldAskToResume('on', 'text', true)).toBe(false)
  })
})
