import { describe, expect, it } from 'vitest'
import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { readJournal, type CallChange, type RestoredInfo } from 'dsh-snapshot'
import { harness, listenerCounts, logged } from 'dsh-testkit'
import { boot, judgeAll, read, snapshot, workspace } from './helpers.ts'

function journals(root: string): string[] {
  const dir = join(root, '.dsh/snapshots')
  return existsSync(dir) ? readdirSync(dir).filter(n => n.endsWith('.journal')).map(n => join(dir, n)) : []
}

describe('dsh-snapshot in the tools/execute waterfall', () => {
  it('captures durably before any other listener or the tool runs', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const h = await boot(root)
    const seen: string[] = []
    // Registered after dsh-snapshot but not prepended: runs inside it.
    h.ctx.on('tools/execute', async (exec, next) => {
      const [file] = journals(root)
      const caps = file ? readJournal(file).records.filter(r => r.record.t === 'cap') : []
      seen.push(`${exec.name}: ${caps.map(r => (r.record.t === 'cap' ? `${r.record.entry.kind} ${r.record.entry.path}` : '')).join(', ')}`)
      return next()
    })
    h.ctx.tools.register({
      name: 'probe_write', description: 'test', effects: 'write', parameters: { type: 'object' },
      paths: () => ['a.txt', 'b.txt'],
      execute: () => {
        const caps = readJournal(journals(root)[0]!).records.filter(r => r.record.t === 'cap').length
        seen.push(`tool ran with ${caps} captures on disk, a.txt = ${read(root, 'a.txt')}`)
        return { content: 'ok' }
      },
    })
    await h.call('probe_write', {})
    await h.call('read_file', { path: 'a.txt' })
    expect(seen).toEqual([
      'probe_write: file a.txt, absent b.txt',
      'tool ran with 2 captures on disk, a.txt = old',
      'read_file: ',
    ])
  })

  it('without a judge a write is committed as soon as its tool returns', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const h = await boot(root)
    const asked: string[] = []
    h.ctx.on('snapshot/changed', change => { asked.push(change.callId); return undefined })
    expect(await h.call('write_file', { path: 'a.txt', content: 'new' }, { callId: 'w1' })).toEqual({ content: 'wrote a.txt (3 bytes)' })
    expect(asked).toEqual(['w1'])
    const [file] = journals(root)
    expect(readJournal(file!).records).toEqual([])
    const r = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'w1', reason: 'late' })
    expect(r).toEqual({ matched: false, restored: [], deleted: [], failed: [], message: 'nothing to restore: no open snapshot for call w1' })
    expect(read(root, 'a.txt')).toBe('new')
  })

  it('with a judge the scope stays open; snapshot/rollback restores and snapshot/restored follows', async () => {
    const root = workspace({ 'src/a.ts': 'export const a = 1\n', 'src/b.ts': 'export const b = 2\n' })
    const h = await boot(root)
    judgeAll(h.ctx)
    const restored: RestoredInfo[] = []
    h.ctx.on('snapshot/restored', info => { restored.push(info) })
    await h.call('multi_edit', {
      edits: [
        { path: 'src/a.ts', old_string: '1', new_string: '"one"' },
        { path: 'src/b.ts', old_string: '2', new_string: '"two"' },
      ],
    }, { callId: 'm1' })
    await h.call('write_file', { path: 'src/gen/c.ts', content: 'export {}\n' }, { callId: 'w2' })
    expect(read(root, 'src/a.ts')).toBe('export const a = "one"\n')
    const r1 = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'w2', reason: 'typecheck failed' })
    expect(r1).toEqual({ matched: true, restored: [], deleted: ['src/gen/c.ts', 'src/gen/'], failed: [], message: 'rolled back call w2: deleted src/gen/c.ts, src/gen/' })
    const r2 = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'm1', reason: 'typecheck failed' })
    expect(r2?.message).toBe('rolled back call m1: restored src/a.ts, src/b.ts')
    expect(read(root, 'src/a.ts')).toBe('export const a = 1\n')
    expect(read(root, 'src/b.ts')).toBe('export const b = 2\n')
    expect(restored).toEqual([
      { sessionId: h.session.id, callId: 'w2', reason: 'typecheck failed', restored: [], deleted: ['src/gen/c.ts', 'src/gen/'], failed: [] },
      { sessionId: h.session.id, callId: 'm1', reason: 'typecheck failed', restored: ['src/a.ts', 'src/b.ts'], deleted: [], failed: [] },
    ])
  })

  it('snapshot/commit closes the scope and keeps the files', async () => {
    const root = workspace({ 'a.txt': 'old' })
    const h = await boot(root)
    judgeAll(h.ctx)
    await h.call('write_file', { path: 'a.txt', content: 'new' }, { callId: 'w1' })
    h.ctx.emit('snapshot/commit', { sessionId: h.session.id, callId: 'w1' })
    const r = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'w1', reason: 'x' })
    expect(r?.matched).toBe(false)
    expect(read(root, 'a.txt')).toBe('new')
  })

  it('a rollback for a session that never wrote says so', async () => {
    const root = workspace()
    const h = await boot(root)
    const r = await h.ctx.serial('snapshot/rollback', { sessionId: 'nobody', step: 3, reason: 'x' })
    expect(r).toEqual({ matched: false, restored: [], deleted: [], failed: [], message: 'nothing to restore: no open snapshot for step 3' })
  })

  it('refuses a path outside the workspace: an isError result, the tool never runs', async () => {
    const outside = workspace()
    const root = workspace({ 'escape': { symlink: outside } })
    const h = await boot(root)
    let ran = false
    h.ctx.on('tools/execute', async (_exec, next) => { ran = true; return next() })
    const real = realpathSync(root)
    expect(await h.call('write_file', { path: '../x.txt', content: 'x' })).toEqual({
      content: `refused: path "../x.txt" is outside the workspace ${real}; the write was not run`, isError: true,
    })
    expect(await h.call('write_file', { path: 'escape/x.txt', content: 'x' })).toEqual({
      content: `refused: path "escape/x.txt" is outside the workspace ${real}; the write was not run`, isError: true,
    })
    expect(ran).toBe(false)
    expect(readdirSync(outside)).toEqual([])
  })

  it('refuses a write it cannot snapshot (over the per-file cap), saying why', async () => {
    const root = workspace({ 'big.txt': 'x'.repeat(4096) })
    const h = await boot(root, { maxFileBytes: 1024 })
    expect(await h.call('edit_file', { path: 'big.txt', old_string: 'xx', new_string: 'y' })).toEqual({
      content: 'snapshot failed: big.txt is 4.0 KiB, over the per-file snapshot cap of 1.0 KiB (dsh-snapshot maxFileBytes); the write was not run', isError: true,
    })
    expect(read(root, 'big.txt')).toBe('x'.repeat(4096))
  })

  it('a workspace that vanished refuses the write with the reason instead of ending the turn', async () => {
    const root = workspace()
    const h = await boot(root)
    expect(h.session.cwd).toBe(root) // open before the workspace vanishes
    rmSync(root, { recursive: true })
    expect(await h.call('write_file', { path: 'a.txt', content: 'x' })).toEqual({
      content: `snapshot failed: cannot open the workspace ${root} (ENOENT); the write was not run`, isError: true,
    })
  })

  it('a tool whose paths() throws is refused with the reason', async () => {
    const root = workspace()
    const h = await boot(root)
    let ran = false
    h.ctx.tools.register({
      name: 'bad_paths', description: 'test', effects: 'write', parameters: { type: 'object' },
      paths: () => { throw new Error('no path given') },
      execute: () => { ran = true; return { content: 'ran' } },
    })
    expect(await h.call('bad_paths', {})).toEqual({ content: 'invalid arguments for bad_paths: cannot tell which paths it writes (no path given); nothing was run', isError: true })
    expect(ran).toBe(false)
  })

  it('a call whose arguments fail the schema gets the schema error, and nothing runs', async () => {
    const root = workspace({ 'a.txt': 'a0' })
    const h = await boot(root)
    expect(await h.call('multi_edit', { edit: [] })).toEqual({
      content: "invalid arguments for multi_edit: arguments must have required property 'edits'; arguments must NOT have additional properties; nothing was run",
      isError: true,
    })
  })

  it('per-step scope: a judge rolls back every write of the step at once', async () => {
    const root = workspace({ 'a.txt': 'a0' })
    const h = await boot(root, { scope: 'step' })
    judgeAll(h.ctx)
    await h.call('write_file', { path: 'a.txt', content: 'a1' }, { callId: 'c1', step: 0, turn: 0 })
    h.ctx.emit('snapshot/commit', { sessionId: h.session.id, step: 0 })
    await h.call('write_file', { path: 'a.txt', content: 'a2' }, { callId: 'c2', step: 1, turn: 0 })
    await h.call('write_file', { path: 'n/b.txt', content: 'b' }, { callId: 'c3', step: 1, turn: 0 })
    await h.call('edit_file', { path: 'a.txt', old_string: 'a2', new_string: 'a3' }, { callId: 'c4', step: 1, turn: 0 })
    const r = await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, step: 1, reason: 'tests failed' })
    expect(r?.message).toBe('rolled back step 1 (calls c2, c3, c4): restored a.txt; deleted n/b.txt, n/')
    expect(read(root, 'a.txt')).toBe('a1')
    expect(existsSync(join(root, 'n'))).toBe(false)
  })

  it('per-step scope without a judge commits after each call', async () => {
    const root = workspace({ 'a.txt': 'a0' })
    const h = await boot(root, { scope: 'step' })
    await h.call('write_file', { path: 'a.txt', content: 'a1' }, { callId: 'c1', step: 0, turn: 0 })
    await h.call('write_file', { path: 'a.txt', content: 'a2' }, { callId: 'c2', step: 0, turn: 0 })
    expect((await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, step: 0, reason: 'x' }))?.matched).toBe(false)
    expect(read(root, 'a.txt')).toBe('a2')
  })

  it('a scope a judge claimed but never judged is committed at the end of the turn, with a warning', async () => {
    const root = workspace({ 'a.txt': 'a0' })
    const h = await boot(root)
    judgeAll(h.ctx)
    const warnings = logged(h.ctx, 'warn')
    await h.call('write_file', { path: 'a.txt', content: 'a1' }, { callId: 'c1', step: 0, turn: 3 })
    h.session.append('turn/end', { turn: 3, reason: 'completed' })
    expect((await h.ctx.serial('snapshot/rollback', { sessionId: h.session.id, callId: 'c1', reason: 'x' }))?.matched).toBe(false)
    expect(warnings).toContain(`session ${h.session.id} turn 3: 1 snapshot scope(s) got no verdict (calls c1); kept the files as they are`)
  })

  it("read tools pass through untouched, and with shell: 'off' shell tools are not snapshotted (only measured, for a listener)", async () => {
    const root = workspace({ 'a.txt': 'a' })
    const h = await boot(root, { shell: 'off' })
    const announced: CallChange[] = []
    h.ctx.on('snapshot/changed', change => { announced.push(change); return undefined })
    expect((await h.call('bash', { command: 'echo hi > b.txt' }, { callId: 'b1' })).content).toBe('[exit code 0]')
    expect((await h.call('read_file', { path: 'a.txt' })).content).toBe('a')
    expect(announced).toEqual([{ sessionId: h.session.id, callId: 'b1', tool: 'bash', effects: 'shell', created: ['b.txt'], modified: [], deleted: [] }])
    expect(journals(root)).toEqual([])
  })
})

describe('lifecycle', () => {
  const names = ['tools/execute', 'tools/returned', 'snapshot/rollback', 'snapshot/commit', 'session/created', 'session/event']

  it('dispose (twice) removes every listener and an idle journal', async () => {
    const root = workspace({ 'a.txt': 'a' })
    const h = await harness({ workspace: root })
    const before = listenerCounts(h.ctx, names)
    const fiber = await h.load(snapshot())
    const loaded = listenerCounts(h.ctx, names)
    expect(names.map(n => loaded[n]! - before[n]!)).toEqual([1, 1, 1, 1, 1, 1])
    await h.call('write_file', { path: 'a.txt', content: 'b' })
    expect(journals(root)).toHaveLength(1)
    await fiber.dispose()
    await fiber.dispose()
    expect(listenerCounts(h.ctx, names)).toEqual(before)
    expect(journals(root)).toEqual([])
    await h.dispose()
  })

  it('a reloaded instance adopts the open scopes the disposed one left', async () => {
    const root = workspace({ 'a.txt': 'old', 'b.txt': 'b0' })
    const h = await harness({ workspace: root, session: { id: 'reload' } })
    const fiber = await h.load(snapshot())
    judgeAll(h.ctx)
    await h.call('write_file', { path: 'b.txt', content: 'b1' }, { callId: 'w0' })
    h.ctx.emit('snapshot/commit', { sessionId: 'reload', callId: 'w0' })
    await h.call('write_file', { path: 'a.txt', content: 'new' }, { callId: 'w1' })
    await fiber.dispose()
    expect(journals(root)).toHaveLength(1)
    const infos = logged(h.ctx, 'info')
    await h.load(snapshot())
    // The adopted session goes on capturing in the same journal, with fresh scope ids (and the workspace lock it held).
    await h.call('write_file', { path: 'b.txt', content: 'b2' }, { callId: 'w2' })
    expect(infos).toContain('adopted 1 open snapshot scope(s) of session reload left by a reloaded instance')
    const r = await h.ctx.serial('snapshot/rollback', { sessionId: 'reload', callId: 'w1', reason: 'x' })
    expect(r?.message).toBe('rolled back call w1: restored a.txt')
    expect(read(root, 'a.txt')).toBe('old')
    expect((await h.ctx.serial('snapshot/rollback', { sessionId: 'reload', callId: 'w2', reason: 'x' }))?.message).toBe('rolled back call w2: restored b.txt')
    expect(read(root, 'b.txt')).toBe('b1')
    // Its scopes closed, the lock is free: another session writes at once.
    const other = await h.call('write_file', { path: 'c.txt', content: 'c' }, { session: h.ctx.sessions.create('reload-2', { cwd: root }) })
    expect(other.content).toBe('created c.txt (1 bytes)')
    await h.dispose()
  })
})

describe('with the agent loop', () => {
  it('per-step scope keyed by the agent\'s step numbers', async () => {
    const root = workspace({ 'a.txt': 'a0' })
    const h = await boot(root, { scope: 'step' }, {
      script: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a1' } }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'BAD' } }, { name: 'write_file', arguments: { path: 'x/y.txt', content: 'BAD' } }] },
        { text: 'done' },
      ],
    })
    // A per-step judge: at the end of each step, roll back when a write put BAD in a file.
    judgeAll(h.ctx)
    const answers: string[] = []
    h.ctx.on('agent/step-results', async (batch, next) => {
      const results = await next()
      const bad = batch.results.some(({ call }) => JSON.stringify(call.arguments).includes('BAD'))
      if (bad) answers.push((await h.ctx.serial('snapshot/rollback', { sessionId: batch.session.id, step: batch.step, reason: 'BAD' }))!.message)
      else h.ctx.emit('snapshot/commit', { sessionId: batch.session.id, step: batch.step })
      return results
    })
    expect(await h.agent.send('go')).toBe('completed')
    expect(answers).toEqual(['rolled back step 1 (calls call_1_0, call_1_1): restored a.txt; deleted x/y.txt, x/'])
    expect(read(root, 'a.txt')).toBe('a1')
    expect(existsSync(join(root, 'x'))).toBe(false)
  })
})
