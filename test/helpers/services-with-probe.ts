import { loadServicesConfig } from '../../services/config'
import { serveServices } from '../../services/serve-services'
import { boundaryProbe } from './boundary-probe'

// The services' entry for crash tests: the production composition, with the kill plan of `ZIDANE_TEST_KILL_PLAN`
// injected into every agent run (see `boundaryProbe`). `startTestStack` starts it when the plan is set.
const plan = process.env.ZIDANE_TEST_KILL_PLAN
if (!plan) throw new Error('set ZIDANE_TEST_KILL_PLAN to the kill plan file')
await serveServices(loadServicesConfig(process.env), { env: process.env, runtimeOptions: boundaryProbe(plan) })
