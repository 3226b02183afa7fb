import { createDefaultRuntime } from 'zidane/durable'
import { runDurableContract } from './contract'

runDurableContract({ name: 'default runtime', create: () => createDefaultRuntime() })
