import { createInterface } from 'node:readline'

/** The streams a terminal prompt reads and writes: injected so tests drive it without a terminal. */
export interface PromptStreams {
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream
}

/** Asks `question` with ` (y/n) ` until the answer is yes or no; resolves false when the input ends. */
export function askYesNo(question: string, streams: PromptStreams): Promise<boolean> {
  const lines = createInterface({ input: streams.input, terminal: false })
  streams.output.write(`${question} (y/n) `)
  return new Promise(resolve => {
    let settled = false
    const finish = (answer: boolean): void => {
      if (settled) return
      settled = true
      lines.close()
      resolve(answer)
    }
    lines.on('line', line => {
      const answer = line.trim().toLowerCase()
      if (answer === 'y' || answer === 'yes') finish(true)
      else if (answer === 'n' || answer === 'no') finish(false)
      else streams.output.write('Please answer y or n: ')
    })
    lines.on('close', () => finish(false))
  })
}

/** Asks `question` and resolves with the next line of input. */
export function askLine(question: string, streams: PromptStreams): Promise<string> {
  const lines = createInterface({ input: streams.input, terminal: false })
  streams.output.write(question)
  return new Promise(done => lines.once('line', line => { lines.close(); done(line) }))
}

/** Whether the run asks before resuming: only under resume-ask, in text mode, on an interactive terminal. */
export function shouldAskToResume(durability: string, output: string, isTerminal: boolean): boolean {
  return durability === 'resume-ask' && output === 'text' && isTerminal
}
