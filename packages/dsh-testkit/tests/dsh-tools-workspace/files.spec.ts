import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, watch, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { harness, tempDir } from 'dsh-testkit'

describe('file tools', () => {
  it('write_file creates parents; read_file reads it back; edit_file replaces one exact match', async () => {
    const { workspace: ws, call } = await harness()
    expect(await call('write_file', { path: 'src/a.ts', content: 'export const a = 1\n' })).toEqual({ content: 'created src/a.ts (19 bytes)' })
    expect((await call('read_file', { path: 'src/a.ts' })).content).toBe('export const a = 1\n')
    expect(await call('edit_file', { path: 'src/a.ts', old_string: '= 1', new_string: '= 2' })).toEqual({ content: 'edited src/a.ts' })
    expect(readFileSync(join(ws, 'src/a.ts'), 'utf8')).toBe('export const a = 2\n')
  })

  it('edit_file says how many matched when not exactly one, and touches nothing', async () => {
    const { workspace: ws, call } = await harness()
    writeFileSync(join(ws, 'f.txt'), 'x x x')
    expect(await call('edit_file', { path: 'f.txt', old_string: 'x', new_string: 'y' }))
      .toEqual({ content: 'f.txt: old_string must match exactly once, found 3 matches — add surrounding lines to make it unique', isError: true })
    expect(await call('edit_file', { path: 'f.txt', old_string: 'z', new_string: 'y' }))
      .toEqual({ content: 'f.txt: old_string must match exactly once, found 0 matches', isError: true })
    expect(readFileSync(join(ws, 'f.txt'), 'utf8')).toBe('x x x')
  })

  it('read_file and edit_file of a missing file say so and create nothing', async () => {
    const { workspace: ws, call } = await harness()
    expect(await call('read_file', { path: 'nope.ts' })).toEqual({ content: 'nope.ts: no such file', isError: true })
    expect(await call('edit_file', { path: 'src/nope.ts', old_string: 'a', new_string: 'b' })).toEqual({ content: 'src/nope.ts: no such file', isError: true })
    expect(readdirSync(ws)).toEqual([])
  })

  it('read_file, edit_file and multi_edit refuse a FIFO (a real one, no writer) at once instead of waiting on it', async () => {
    const { workspace: ws, call } = await harness()
    execFileSync('mkfifo', [join(ws, 'pipe')])
    expect(await call('read_file', { path: 'pipe' })).toEqual({ content: 'pipe: not a regular file (a FIFO); nothing was read', isError: true })
    expect(await call('edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' })).toEqual({ content: 'pipe: not a regular file (a FIFO); nothing was read', isError: true })
    expect(await call('multi_edit', { edits: [{ path: 'pipe', old_string: 'a', new_string: 'b' }] })).toEqual({ content: 'pipe: not a regular file (a FIFO); no file was changed', isError: true })
    expect(statSync(join(ws, 'pipe')).isFIFO()).toBe(true)
  })

  it('read_file of a large file reads only the head and tail it keeps, as the cap says', async () => {
    const { workspace: ws, call } = await harness({ workspaceTools: { readMaxBytes: 1000 } })
    writeFileSync(join(ws, 'big.txt'), 'h'.repeat(500) + 'm'.repeat(1_000_000) + 't'.repeat(500))
    expect((await call('read_file', { path: 'big.txt' })).content).toBe(`${'h'.repeat(480)}\n[… ${1_001_000 - 960} bytes truncated]\n${'t'.repeat(480)}`)
  })

  it('write_file to the workspace itself ("", ".", "src/..") or to a directory is refused, and nothing is written beside the workspace', async () => {
    const parent = tempDir('dsh-parent-')
    const ws = join(parent, 'ws')
    mkdirSync(join(ws, 'src'), { recursive: true })
    const { call } = await harness({ workspace: ws })
    // Every entry made in the parent (inotify: a temp file created and removed is seen too).
    const seen: string[] = []
    const watcher = watch(parent, (_event, name) => { if (name) seen.push(name) })
    try {
      for (const path of ['', '.', 'src/..']) {
        expect(await call('write_file', { path, content: 'x' })).toEqual({ content: `refused: path ${JSON.stringify(path)} names the workspace directory itself, not a file; nothing was written`, isError: true })
      }
      expect(await call('write_file', { path: 'src', content: 'x' })).toEqual({ content: 'refused: src is a directory, not a file; nothing was written', isError: true })
      // Events arrive in order: once the sentinel is seen, every earlier one was.
      writeFileSync(join(parent, 'sentinel'), '')
      await vi.waitFor(() => expect(seen).toContain('sentinel'))
    } finally {
      watcher.close()
    }
    expect(seen.filter(name => name !== 'sentinel')).toEqual([])
    expect(readdirSync(parent).sort()).toEqual(['sentinel', 'ws'])
    expect(readdirSync(ws)).toEqual(['src'])
    expect(readdirSync(join(ws, 'src'))).toEqual([])
  })

  it('writes keep the file mode and leave no temp files behind', async () => {
    const { workspace: ws, call } = await harness()
    writeFileSync(join(ws, 'run.sh'), 'echo 1\n')
    chmodSync(join(ws, 'run.sh'), 0o751)
    await call('edit_file', { path: 'run.sh', old_string: '1', new_string: '2' })
    expect(statSync(join(ws, 'run.sh')).mode & 0o777).toBe(0o751)
    await call('write_file', { path: 'run.sh', content: 'echo 3\n' })
    expect(statSync(join(ws, 'run.sh')).mode & 0o777).toBe(0o751)
    expect(readdirSync(ws).sort()).toEqual(['run.sh'])
  })

  it('multi_edit is all-or-nothing across files', async () => {
    const { workspace: ws, call } = await harness()
    writeFileSync(join(ws, 'a.txt'), 'alpha')
    writeFileSync(join(ws, 'b.txt'), 'beta')
    const r = await call('multi_edit', { edits: [
      { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' },
      { path: 'b.txt', old_string: 'gamma', new_string: 'GAMMA' },
    ] })
    expect(r).toEqual({ content: 'b.txt: old_string must match exactly once, found 0 matches; no file was changed', isError: true })
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('alpha')
    const ok = await call('multi_edit', { edits: [
      { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' },
      { path: 'a.txt', old_string: 'ALPHA', new_string: 'ALPHA!' },
      { path: 'b.txt', old_string: 'beta', new_string: 'BETA' },
    ] })
    expect(ok).toEqual({ content: 'edited a.txt, b.txt (3 edits)' })
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('ALPHA!')
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('BETA')
  })
})

describe('workspace containment', () => {
  it('refuses ../, absolute paths and symlink escapes, touching nothing', async () => {
    const { workspace: ws, call } = await harness()
    const outside = tempDir('dsh-outside-')
    writeFileSync(join(outside, 'secret.txt'), 'secret')
    symlinkSync(outside, join(ws, 'link'))
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'secret-link.txt'))
    const attempts: [string, Record<string, unknown>][] = [
      ['write_file', { path: '../escape.txt', content: 'x' }],
      ['write_file', { path: join(outside, 'abs.txt'), content: 'x' }],
      ['write_file', { path: 'link/new.txt', content: 'x' }],
      ['edit_file', { path: 'secret-link.txt', old_string: 'secret', new_string: 'pwned' }],
      ['read_file', { path: 'link/secret.txt' }],
      ['multi_edit', { edits: [{ path: 'link/secret.txt', old_string: 'secret', new_string: 'pwned' }] }],
    ]
    for (const [name, args] of attempts) {
      const r = await call(name, args)
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
      expect(r.content).toMatch(/^refused: path ".*" is outside the workspace .*; nothing was touched$/)
    }
    expect(readdirSync(outside).sort()).toEqual(['secret.txt'])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret')
    expect(existsSync(join(ws, '..', 'escape.txt'))).toBe(false)
  })

  it('names paths relative to the workspace even when its path goes through a symlink', async () => {
    const { ctx, workspace: ws, call } = await harness()
    const link = join(tempDir('dsh-link-'), 'ws-link')
    symlinkSync(ws, link)
    const session = ctx.sessions.create(undefined, { cwd: link })
    const r = await call('write_file', { path: 'src/a.ts', content: 'x' }, { session })
    expect(r).toEqual({ content: 'created src/a.ts (1 bytes)' })
    const m = await call('multi_edit', { edits: [{ path: 'src/a.ts', old_string: 'x', new_string: 'y' }] }, { session })
    expect(m).toEqual({ content: 'edited src/a.ts (1 edits)' })
  })

  it('allows a symlink that stays inside the workspace', async () => {
    const { workspace: ws, call } = await harness()
    mkdirSync(join(ws, 'real'))
    symlinkSync(join(ws, 'real'), join(ws, 'alias'))
    expect((await call('write_file', { path: 'alias/x.txt', content: 'ok' })).isError).toBeFalsy()
    expect(readFileSync(join(ws, 'real/x.txt'), 'utf8')).toBe('ok')
  })
})
