import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { workspacePath, legacyWorkspaceFolderName } from '../../services/workspace'
import { fileWorkerFolder } from '../../services/workspace-workers'

const root = path.resolve('/srv/workspaces')
const workspaceOf = (sessionKey: string): string => path.join(root, ...workspacePath(sessionKey))

describe('the folder a session\'s file worker is confined to', () => {
  it('is the tenant\'s folder for a session of a tenant, and for its sub-agents\' tree', () => {
    expect(fileWorkerFolder(root, workspaceOf('acme~s1'), 'acme')).toBe(path.join(root, 'acme'))
    expect(fileWorkerFolder(root, workspaceOf('acme~s1:child-1'), 'acme')).toBe(path.join(root, 'acme'))
    expect(fileWorkerFolder(root, workspaceOf('a b~s1'), 'a b')).toBe(path.join(root, 'a%20b'))
  })

  it('is the workspace itself for a session without a tenant: the % folder holds many tenants', () => {
    expect(fileWorkerFolder(root, workspaceOf('s1'), 's1')).toBe(workspaceOf('s1'))
    expect(fileWorkerFolder(root, workspaceOf('s1:child-1'), 's1')).toBe(workspaceOf('s1:child-1'))
  })

  it('is the workspace itself for a legacy flat workspace and for a folder not of the tenant', () => {
    expect(fileWorkerFolder(root, path.join(root, legacyWorkspaceFolderName('acme~s1')), 'acme')).toBe(path.join(root, legacyWorkspaceFolderName('acme~s1')))
    expect(fileWorkerFolder(root, workspaceOf('acme~s1'), 'globex')).toBe(workspaceOf('acme~s1'))
    expect(fileWorkerFolder(root, '/elsewhere/acme/s1', 'acme')).toBe('/elsewhere/acme/s1')
  })
})
