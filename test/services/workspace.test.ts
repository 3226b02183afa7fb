import { mkdir, mkdtemp, rm, stat, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { folderSegment, legacyWorkspaceFolderName, MAX_FOLDER_NAME, sessionWorkspace, tenantOfSessionKey, workspacePath } from '../../services/workspace'

describe('workspace folders', () => {
  it("never give a child of one session the folder of another session (sp1's grandchild vs a session sp1_child-3)", () => {
    const tenant = '0123456789abcdef'
    const grandchild = `${tenant}~sp1:child-3`
    const lookalike = `${tenant}~sp1_child-3`
    expect(workspacePath(grandchild)).not.toEqual(workspacePath(lookalike))
  })

  it('names the folder after the session id, under its tenant', () => {
    expect(workspacePath('e15922da4cbddc25~ap1')).toEqual(['e15922da4cbddc25', 'ap1'])
    expect(workspacePath('open~my_session-2')).toEqual(['open', 'my_session-2'])
    expect(workspacePath('t~s1:child-1')).toEqual(['t', 's1%3Achild-1'])
    expect(workspacePath('no-tenant')).toEqual(['%', 'no-tenant'])
  })

  it('maps distinct keys to distinct paths (injective), each name safe: no /, NUL, dot names, at most 200 characters', () => {
    const long = 'x'.repeat(300)
    const keys = ['a', 'a_', 'a~', 'a:', 'a_7e', 'a_3a', '_', '__', '.', '..', '.a', '%2Ea', '%', '', 'é', 'e\u0301', 'x~y:child-1:child-2', 'x~y_3achild-1', 'x~y%3Achild-1',
      'a/b', '../x', 'a\u0000b', 't~', '~t', 't~~', long, `${long}y`, `${'é'.repeat(150)}`, `${'é'.repeat(150)}a`, `t~${long}`, `${'%'.repeat(100)}`]
    const paths = keys.map(key => workspacePath(key).join('/'))
    expect(new Set(paths).size).toBe(keys.length)
    for (const name of keys.flatMap(workspacePath)) {
      expect(name).toMatch(/^[A-Za-z0-9_%~-][A-Za-z0-9_.%~-]*$/)
      expect(name.length).toBeLessThanOrEqual(MAX_FOLDER_NAME)
      expect(['.', '..']).not.toContain(name)
    }
    expect(folderSegment(long)).toMatch(/^x+~[0-9a-f]{32}$/)
    expect(folderSegment('é'.repeat(150))).not.toMatch(/%[0-9A-F]?~/)
  })

  it('creates the folder under the root, in its tenant folder', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zidane-ws-'))
    try {
      const folder = await sessionWorkspace(root, 't~s1')
      expect(folder).toBe(join(root, 't', 's1'))
      expect(basename(folder)).toBe('s1')
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('keeps using the flat folder a session has from before, and never follows a link in its place', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zidane-ws-'))
    try {
      await mkdir(join(root, legacyWorkspaceFolderName('t~old')))
      expect(await sessionWorkspace(root, 't~old')).toBe(join(root, 't_7eold'))
      await symlink(tmpdir(), join(root, legacyWorkspaceFolderName('t~linked')))
      expect(await sessionWorkspace(root, 't~linked')).toBe(join(root, 't', 'linked'))
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('is private to the services\' user: 0700, also a workspace made before with 0755', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zidane-ws-'))
    try {
      await mkdir(join(root, 't', 'old'), { recursive: true, mode: 0o755 })
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
