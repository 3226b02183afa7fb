import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isProcessAlive } from '../../src/durable/process-alive'

/**
 * Where handed-out ports are claimed, machine-wide: one file per port holding the pid of the process that took it.
 * A port stays claimed while that process lives, so a port that a supervised child frees when it is killed (and binds
 * again when it restarts) is never handed to another stack in between, in this process or in another test run.
 */
const CLAIMS_FOLDER = join(tmpdir(), 'zidane-port-claims')
/** Ports are drawn below the kernel's ephemeral range, so no outgoing connection takes one while its owner restarts. */
const EPHEMERAL_FALLBACK_LOW = 32_768
const RANGE_SIZE = 12_000
const TRIES = 500

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > RANGE_SIZE + 1_024 ? low : EPHEMERAL_FALLBACK_LOW
  } catch {
    return EPHEMERAL_FALLBACK_LOW
  }
}

/** Claims `port` for this process; false when a live process (this one included) holds it. A dead owner's claim is taken over. */
export function claimPort(port: number): boolean {
  mkdirSync(CLAIMS_FOLDER, { recursive: true })
  const file = join(CLAIMS_FOLDER, String(port))
  const write = (): boolean => {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return true
    } catch {
      return false
    }
  }
  if (write()) return true
  const owner = Number(readFileSync(file, 'utf8'))
  if (Number.isInteger(owner) && owner > 0 && isProcessAlive(owner)) return false
  rmSync(file, { force: true })
  return write()
}

function release(port: number): void {
  rmSync(join(CLAIMS_FOLDER, String(port)), { force: true })
}

function canBind(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = net.createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * A free loopback TCP port, claimed for this process (see {@link CLAIMS_FOLDER}): drawn below the ephemeral range,
 * bindable now, and not handed out again, here or to another process, while this process lives.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const port = high - Math.floor(Math.random() * RANGE_SIZE)
    if (!claimPort(port)) continue
    if (await canBind(port)) return port
    release(port)
  }
  throw new Error(`no free loopback port below ${high + 1} after ${TRIES} tries`)
}

/** `count` distinct free ports (each claimed, see {@link freePort}). */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = []
  for (let index = 0; index < count; index++) ports.push(await freePort())
  return ports
}

/** Free ports for a whole stack, as the environment variables `loadStackConfig` reads. */
export async function freeStackPortsEnv(): Promise<Record<string, string>> {
  const names = ['RESTATE_INGRESS_PORT', 'RESTATE_ADMIN_PORT', 'RESTATE_FABRIC_PORT', 'SERVICES_PORT', 'ZIDANE_LIVE_PORT', 'GATEWAY_PORT'] as const
  const ports = await freePorts(names.length)
  return Object.fromEntries(names.map((name, index) => [name, String(ports[index])]))
}
