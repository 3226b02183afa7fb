import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'

/** Ports, folders and keys of a local stack, from the environment (all documented in docs/configuration.md). */
export interface StackConfig {
  rootDir: string
  dataDir: string
  ingressPort: number
  adminPort: number
  fabricPort: number
  servicesPort: number
  /** Internal port of the services' live hub (`ZIDANE_LIVE_PORT`, default the services port + 100); loopback only. */
  livePort: number
  gatewayPort: number
  host: string
  gatewayApiKeys: string
  generatedKey: boolean
  /** HMAC secret of answer links, kept in the data folder so links survive restarts (open mode included). */
  answerSecret: string
  /** Shared token between the services' live hub and the gateway (`ZIDANE_LIVE_TOKEN`, else kept in the data folder). */
  liveToken: string
  /** The services' entry, from the root (default `services/endpoint.ts`); tests start theirs with their probes. */
  servicesEntry?: string
}

function port(value: string | undefined, fallback: number): number {
  const parsed = Number(value)
  return Number.isInteger(parsed) && parsed > 0 && parsed < 65536 ? parsed : fallback
}

/** Reads the stack configuration; generates (once, kept in the data folder) a gateway API key when none is set. */
export async function loadStackConfig(env: NodeJS.ProcessEnv = process.env): Promise<StackConfig> {
  const rootDir = resolve(env.ZIDANE_ROOT ?? process.cwd())
  const dataDir = resolve(env.ZIDANE_DATA_DIR ?? join(rootDir, '.restate-data'))
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  let gatewayApiKeys = env.GATEWAY_API_KEYS ?? ''
  let generatedKey = false
  if (!gatewayApiKeys && env.GATEWAY_OPEN !== '1') {
    const keyFile = join(dataDir, 'gateway-api-key')
    if (!existsSync(keyFile)) await writeFile(keyFile, `zk_${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 })
    await chmod(keyFile, 0o600) // a file written before (or copied in) is made private too
    gatewayApiKeys = (await readFile(keyFile, 'utf8')).trim()
    generatedKey = true
  }
  const answerSecret = env.GATEWAY_ANSWER_SECRET ?? (await keptSecret(join(dataDir, 'answer-secret')))
  const liveToken = env.ZIDANE_LIVE_TOKEN || (await keptSecret(join(dataDir, 'live-token')))
  const servicesPort = port(env.SERVICES_PORT, 9080)
  return {
    answerSecret,
    liveToken,
    rootDir,
    dataDir,
    ingressPort: port(env.RESTATE_INGRESS_PORT, 8080),
    adminPort: port(env.RESTATE_ADMIN_PORT, 9070),
    fabricPort: port(env.RESTATE_FABRIC_PORT, 5122),
    servicesPort,
    livePort: port(env.ZIDANE_LIVE_PORT, servicesPort + 100),
    gatewayPort: port(env.GATEWAY_PORT, 3000),
    host: env.GATEWAY_HOST ?? '127.0.0.1',
    gatewayApiKeys,
    generatedKey,
  }
}

async function keptSecret(file: string): Promise<string> {
  if (!existsSync(file)) await writeFile(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
  await chmod(file, 0o600)
  return (await readFile(file, 'utf8')).trim()
}
