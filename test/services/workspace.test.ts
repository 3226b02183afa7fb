import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sessionWorkspace, tenantOfSessionKey, workspaceFolderName } from '../../services/workspace'

describe('workspace folders', () => {
  it("never give a child of one session the folder of another session (sp1's grandchild vs a session sp1_child-3)", () => {
    const tenant = '0123456789abcdef'
    const grandchild = `${tenant}~sp1:child-3`
    const lookalike = `${tenant}~sp1_child-3`
    expect(workspaceFolderName(grandchild)).not.toBe(workspaceFolderName(lookalike))
  })

  it('maps distinct keys to distinct folder names (injective), with only safe characters', () => {
    const keys = ['a', 'a_', 'a~', 'a:', 'a_7e', 'a_3a', '_', '__', '.', '..', 'é', 'e\u0301', 'x~y:child-1:child-2', 'x~y_3achild-1']
    const names = keys.map(workspaceFolderName)
    expect(new Set(names).size).toBe(keys.length)
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  it('creates the folder under the root', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zidane-ws-'))
    try {
      const folder = await sessionWorkspace(root, 't~s1')
      expect(folder).toBe(join(root, 't_7es1'))
      expect(basename(folder)).toBe(workspaceFolderName('t~s1'))
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('is private to the services\' user: 0700, also a workspace made before with 0755', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zidane-ws-'))
    try {
      await mkdir(join(root, workspaceFolderName('t~old')), { mode: 0o755 })
      const modes = await Promise.all(['t~new', 't~old'].map(async key => (await stat(await sessionWorkspace(root, key))).mode & 0o777))
      expect(modes.map(mode => mode.toString(8))).toEqual(['700', '700'])
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})

describe('tenantOfSessionKey', () => {
  it('is the tenant of the gateway\'s key, shared by the sub-agents of its sessions', () => {
    expect(tenantOfSessionKey('0123456789abcdef~s1')).toBe('0123456789abcdef')
    expect(tenantOfSessionKey('0123456789abcdef~s1:child-1:child-2')).toBe('0123456789abcdef')
    expect(tenantOfSessionKey('open~s1')).toBe('open')
  })

  it('makes a key without a tenant (no gateway) a tenant of its own, with its sub-agents', () => {
    expect(tenantOfSessionKey('s1')).toBe('s1')
    expect(tenantOfSessionKey('s1:child-1')).toBe('s1')
    expect(tenantOfSessionKey('~odd')).toBe('~odd')
  })
})
