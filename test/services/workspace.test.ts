import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sessionWorkspace, workspaceFolderName } from '../../services/workspace'

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
})
