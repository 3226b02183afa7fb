import { runDurableContract } from '../contract'
import { useTempFiles } from './sqlite-test-helpers'

const files = useTempFiles()
runDurableContract({
  name: 'SQLite runtime',
  create: () => files.open(),
  reopen: () => files.open(),
})
