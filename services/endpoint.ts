import { loadServicesConfig } from './config'
import { serveServices } from './serve-services'

// The services' entry: the one place that reads the environment (see `serveServices`).
await serveServices(loadServicesConfig(process.env), { env: process.env })
