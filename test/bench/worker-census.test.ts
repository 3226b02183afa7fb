import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { countWorkersDuring } from '../../bench/lib/worker-census'

/** This test's own mark: the real file workers of tests running beside it in this process are not counted. */
const MARK = '/tmp/zidane-file-worker-census-test/'

/** A process whose command line carries the file worker's mark, living `ms`. */
function fakeWorker(ms: number): Promise<void> {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`, '/tmp/zidane-file-worker-census-test/main.mjs'], { stdio: 'ignore' })
  return new Promise(resolve => child.on('exit', () => resolve()))
}

describe('the file worker census of bench §14', () => {
  it('counts each worker process seen while the batch runs once, and no other process', async () => {
    // Neither a process without the mark nor one that is not Node (the sandbox around a worker carries its command line).
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1500)'], { stdio: 'ignore' })
    const wrapper = spawn('sh', ['-c', 'sleep 1.5', '/tmp/zidane-file-worker-census-test/main.mjs'], { stdio: 'ignore' })
    try {
      const { result, workers } = await countWorkersDuring(async () => {
        await Promise.all([fakeWorker(800), fakeWorker(800), sleep(200).then(() => fakeWorker(800))])
        return 'done'
      }, 50, process.pid, [MARK])
      expect(result).toBe('done')
      expect(workers).toBe(3)
    } finally {
      other.kill()
      wrapper.kill()
    }
  }, 20_000)
})
