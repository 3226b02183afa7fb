import { execFileSync } from 'node:child_process'
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { removeSessionWorkspaces } from '../../services/workspace-removal'
import { sessionWorkspace } from '../../services/workspace'

describe('removing a session workspace', () => {
  let base = ''
  let root = ''
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'zidane-ws-rm-'))
    root = join(base, 'workspaces')
    await mkdir(root)
  })
  afterEach(async () => {
    execFileSync('chmod', ['-R', 'u+rwx', base])
    execFileSync('rm', ['-rf', '--', base])
  })

  it('removes a hostile workspace without following its links out: the outside file and folder survive', async () => {
    const outside = join(base, 'outside')
    await mkdir(outside)
    await writeFile(join(outside, 'secret.txt'), 'keep me')
    const folder = await sessionWorkspace(root, 't~s1')
    await symlink(join(outside, 'secret.txt'), join(folder, 'link-to-file'))
    await symlink(outside, join(folder, 'link-to-folder'))
    // A link to a folder that stands for the host's root (a link to `/` itself would put the host at stake if this failed).
    await symlink(outside, join(folder, 'link-to-root'))
    await mkdir(join(folder, 'sub'))
    await symlink(outside, join(folder, 'sub', 'nested-link'))
    execFileSync('mkfifo', [join(folder, 'a-fifo')])
    for (const name of ['-rf', '\nnewline', ' space ', 'back\\slash', '*', '..x', 'é']) await writeFile(join(folder, name), 'x')
    await writeFile(Buffer.concat([Buffer.from(`${folder}/`), Buffer.from([0xff, 0xfe])]), 'not utf-8')
    await removeSessionWorkspaces(root, 't~s1')
    await expect(lstat(folder)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('keep me')
    expect(await readdir(outside)).toEqual(['secret.txt'])
    expect(await readdir(join(root, 't'))).toEqual([])
  })

  it('removes a folder its tenant made unreadable and a tree deeper than a path may be long (fs.rm alone: ENAMETOOLONG), links in them kept', async () => {
    const outside = join(base, 'outside')
    await mkdir(outside)
    await writeFile(join(outside, 'secret.txt'), 'keep me')
    const folder = await sessionWorkspace(root, 't~s1')
    await mkdir(join(folder, 'locked', 'inner'), { recursive: true })
    await writeFile(join(folder, 'locked', 'inner', 'f'), 'x')
    await symlink(outside, join(folder, 'locked', 'inner', 'link'))
    await chmod(join(folder, 'locked'), 0o000)
    execFileSync('perl', ['-e', 'chdir $ARGV[0] or die; for (1..1100) { mkdir "dddd" or die; chdir "dddd" or die } symlink($ARGV[1], "link") or die', folder, outside])
    await removeSessionWorkspaces(root, 't~s1')
    await expect(lstat(folder)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await readdir(outside)).toEqual(['secret.txt'])
  })

  it("removes the session's sub-agent folders and its flat folder from before, and no other session's", async () => {
    for (const key of ['t~s1', 't~s1:child-1', 't~s1:child-1:child-2', 't~s10', 't~s1_child-1', 'u~s1']) await sessionWorkspace(root, key)
    await mkdir(join(root, 't_7es1'))
    await mkdir(join(root, 't_7es1_3achild-1'))
    await mkdir(join(root, 't_7es10'))
    await removeSessionWorkspaces(root, 't~s1')
    expect((await readdir(join(root, 't'))).sort()).toEqual(['s10', 's1_child-1'])
    expect((await readdir(root)).sort()).toEqual(['t', 't_7es10', 'u'])
    expect(await readdir(join(root, 'u'))).toEqual(['s1'])
  })

  it('is a no-op for a session without a workspace', async () => {
    await expect(removeSessionWorkspaces(root, 't~never')).resolves.toEqual([])
  })
})
