import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { findCgroupRoots } from '../../src/tools/builtin/cgroup-roots'
import { createBuiltinTools } from '../../src/tools/builtin/create-builtin-tools'
import type { ToolDef } from '../../src/tools/tool'
import { createToolContext } from '../tools/builtin/tool-context'
import { shellPolicy } from '../../services/shell-policy'
import { builtinTools, selectToolNames } from '../../services/tool-selection'

const all = ['read_file', 'write_file', 'shell', 'spawn']

describe('operator control of the tools', () => {
  it('keeps every tool by default', () => {
    expect(selectToolNames(all, { ZIDANE_SANDBOX: 'off' })).toEqual(['read_file', 'write_file', 'shell', 'spawn'])
  })

  it('keeps only ZIDANE_TOOLS, minus ZIDANE_DISABLE_TOOLS', () => {
    expect(selectToolNames(all, { ZIDANE_TOOLS: 'read_file, shell', ZIDANE_SANDBOX: 'off' })).toEqual(['read_file', 'shell'])
    expect(selectToolNames(all, { ZIDANE_DISABLE_TOOLS: 'shell,spawn' })).toEqual(['read_file', 'write_file'])
    expect(shellPolicy({ ZIDANE_DISABLE_TOOLS: 'shell' }).status.mode).toBe('disabled')
  })

  it('drops shell when the sandbox is required but not usable, and runs it unsandboxed when not required', () => {
    const missing = { ZIDANE_SANDBOX_BWRAP: '/nonexistent/bwrap' }
    expect(selectToolNames(all, { ...missing, ZIDANE_SANDBOX: 'required' })).toEqual(['read_file', 'write_file', 'spawn'])
    expect(shellPolicy({ ...missing, ZIDANE_SANDBOX: 'required' }).status.reason).toContain('/nonexistent/bwrap')
    expect(shellPolicy(missing).status.mode).toBe('unsandboxed')
    expect(shellPolicy({ ZIDANE_SANDBOX: 'required' }).status.mode).toBe('sandboxed')
  })
})

describe('ZIDANE_SANDBOX_ALLOW_DOMAINS', () => {
  it('lets shell commands reach the listed domains only, through the proxy', async () => {
    const policy = shellPolicy({ ZIDANE_SANDBOX: 'required', ZIDANE_SANDBOX_ALLOW_DOMAINS: 'example.com, api.github.com' })
    expect(policy.status.mode).toBe('sandboxed')
    expect(policy.status.reason).toMatch(/^commands run in a bubblewrap sandbox: network only to example.com, api.github.com; process cap 1024 \(cgroup pids.max\); per tenant/)
    const shell = createBuiltinTools({ root: mkdtempSync(join(tmpdir(), 'zidane-egress-')), shell: policy.options }).find(tool => tool.spec.name === 'shell') as ToolDef
    const output = await shell.execute({ command: 'curl -sS -m 10 http://api.github.com/; curl -sS -m 10 http://other.example.org/' }, createToolContext())
    // No internet here: the listed name passes the allow-list and fails only to resolve; the other is refused outright.
    expect(JSON.stringify(output)).toContain('api.github.com does not resolve')
    expect(JSON.stringify(output)).toContain('other.example.org is not in the sandbox\'s allowed domains')
  })

  it('is off by default: the sandbox has no network', () => {
    expect(shellPolicy({ ZIDANE_SANDBOX: 'required' }).status.reason).toMatch(/^commands run in a bubblewrap sandbox: no network; process cap 1024 \(cgroup pids.max\); per tenant/)
  })
})

describe('the limits of the tenant', () => {
  it('are in the shell status, from the settings', () => {
    const reason = shellPolicy({ ZIDANE_SANDBOX: 'required', ZIDANE_TENANT_MEMORY_MB: '300', ZIDANE_TENANT_MAX_PROCESSES: '70', ZIDANE_TENANT_CPU_PERCENT: '50', ZIDANE_WORKSPACE_QUOTA_MB: '40', ZIDANE_SANDBOX_TMP_MB: '30' }).status.reason
    expect(reason).toMatch(/per tenant \(cgroup v[12]\): memory 300 MiB, 70 processes, CPU 50%; .*\/tmp 30 MiB, \/dev\/shm 64 MiB; workspace quota 40 MiB; seccomp filter$/)
  })

  it('hold every shell command of a session: it runs in its tenant\'s cgroup', async () => {
    const env = { ZIDANE_SANDBOX: 'required' }
    const shell = builtinTools(mkdtempSync(join(tmpdir(), 'zidane-tenant-')), env, shellPolicy(env), 'acme').find(tool => tool.spec.name === 'shell') as ToolDef
    const running = shell.execute({ command: 'sleep 1' }, createToolContext())
    const pids = findCgroupRoots().find(root => root.controllers.includes('pids'))
    const tenant = join(pids?.folder ?? '/nonexistent', 'zidane-sandbox', `tenant-${createHash('sha256').update('acme').digest('hex').slice(0, 16)}`)
    await vi.waitFor(() => { expect(readdirSync(tenant).some(name => name.startsWith('command-'))).toBe(true) }, { timeout: 5000, interval: 20 })
    await running
  })
})

describe('the file tools without the sandbox', () => {
  it('keep the workspace quota: a write past ZIDANE_WORKSPACE_QUOTA_MB is refused', async () => {
    const root = mkdtempSync(join(tmpdir(), 'zidane-unsandboxed-quota-'))
    const env = { ZIDANE_SANDBOX: 'off', ZIDANE_WORKSPACE_QUOTA_MB: '1' }
    const write = builtinTools(root, env, shellPolicy(env)).find(each => each.spec.name === 'write_file')
    if (!write) throw new Error('no write_file')
    await expect(write.execute({ path: 'big.txt', content: 'x'.repeat(2 * 1024 * 1024) }, createToolContext())).rejects.toMatchObject({ code: 'workspace_quota_exceeded' })
    expect(await write.execute({ path: 'small.txt', content: 'fits' }, createToolContext())).toMatch(/Wrote 4 bytes/)
  })
})
