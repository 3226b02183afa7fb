import { linkSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { asServicesUser, prepareForServicesUser } from '../../../scripts/stack/services-user'

const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 }

describe('handing the data folder to the services user', () => {
  let dataDir = ''
  afterEach(() => { rmSync(dataDir, { recursive: true, force: true }) })

  it.skipIf(process.getuid?.() !== 0)("closes Restate's folders, hands out the workspaces and leaves a hard-linked host file root's", () => {
    dataDir = mkdtempSync(join(tmpdir(), 'zidane-services-user-'))
    const restateNode = join(dataDir, 'zidane-1')
    mkdirSync(restateNode, { mode: 0o755 })
    const secret = join(dataDir, 'answer-secret')
    writeFileSync(secret, 'secret', { mode: 0o600 })
    const workspaces = join(dataDir, 'workspaces')
    mkdirSync(join(workspaces, 'tenant'), { recursive: true })
    writeFileSync(join(workspaces, 'tenant', 'own.txt'), 'x')
    linkSync(secret, join(workspaces, 'tenant', 'planted'))
    prepareForServicesUser(NOBODY, dataDir, [workspaces])
    expect(statSync(dataDir).mode & 0o777).toBe(0o711)
    expect(statSync(restateNode).mode & 0o777).toBe(0o700)
    expect(statSync(join(workspaces, 'tenant', 'own.txt')).uid).toBe(65534)
    expect(statSync(join(workspaces, 'tenant')).uid).toBe(65534)
    expect(statSync(secret).uid).toBe(0)
  })
})

describe('asServicesUser', () => {
  it('joins every delegated cgroup, then drops to the user and execs the program with its arguments', () => {
    const { command, args } = asServicesUser(NOBODY, ['/cg/a/cgroup.procs', '/cg/b/cgroup.procs'], '/usr/bin/node', ['--import', 'x', 'main.ts'])
    expect(command).toBe('sh')
    expect(args.slice(2)).toEqual(['sh', '/cg/a/cgroup.procs', '/cg/b/cgroup.procs', '/usr/bin/node', '--import', 'x', 'main.ts'])
    expect(args[1]).toBe('echo $$ > "$1" && echo $$ > "$2" && shift 2 && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --pdeathsig=TERM -- "$@"')
  })
})
