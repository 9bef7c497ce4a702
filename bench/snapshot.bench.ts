// snapshot: what it costs to make a write undoable, ours vs a shadow-git
// checkpoint (`git add -A && git commit` in a separate git dir, the way
// several agent tools checkpoint), in the same run on the same workspace.
//  1. Capture + commit per write on a generated 10,000-file workspace
//     (fsync on, the default; and off) vs the shadow-git checkpoint. Goal ≥ 50×.
//  2. Cost grows with the bytes touched, not with the repository: ours at
//     1 KiB … 4 MiB per write, and on 1,000 / 10,000 / 30,000-file workspaces.
//  3. Through the real tools/execute waterfall: write_file with and without
//     the plugin loaded (what a guarded write adds, end to end).
//  4. shell: 'git' (opt-in): the pre-call working-tree snapshot of a git
//     workspace, and the rollback of one changed file.
//  5. shell: 'track' (default): a bash call that changes nothing, 1 file,
//     100 files, through the real waterfall with a judge that hears what the
//     call changed — beside the same call unguarded and beside a shadow-git
//     checkpoint before it. Goal: ≤ 30 ms added to a call that changes
//     nothing; cost growing with the bytes changed, not the workspace.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import SessionService from 'dsh-session'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import * as SnapshotPlugin from 'dsh-snapshot'
import { Snapshots, type SyncMode } from 'dsh-snapshot'

const WRITES = Number(process.env.DSH_BENCH_WRITES ?? 200)
const GIT_WRITES = Number(process.env.DSH_BENCH_GIT_WRITES ?? 25)
const scratch = mkdtempSync(join(tmpdir(), 'dsh-snap-bench-'))

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

/** `files` files of ~`bytes` bytes in 100 per directory: a repository-shaped tree. */
function generate(name: string, files: number, bytes = 2500): string {
  const root = join(scratch, name)
  for (let i = 0; i < files; i++) {
    const dir = join(root, 'src', `m${Math.floor(i / 100)}`)
    if (i % 100 === 0) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.ts`), `// file ${i}\n` + `export const v${i} = ${i}\n`.repeat(Math.ceil(bytes / 24)))
  }
  return root
}

function git(env: NodeJS.ProcessEnv, cwd: string, ...args: string[]) {
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', '-c', 'gc.auto=0', ...args], { cwd, env: { ...process.env, ...env }, stdio: 'ignore' })
}

/** Per write: checkpoint with `git add -A && git commit` into a shadow git dir, then the write. */
function shadowGit(root: string, writes: number): { first: number; per: number } {
  const env = { GIT_DIR: join(scratch, `${root.split('/').pop()}.shadow.git`), GIT_WORK_TREE: root }
  git(env, root, 'init', '-q')
  let t = performance.now()
  git(env, root, 'add', '-A')
  git(env, root, 'commit', '-q', '--allow-empty', '-m', 'base')
  const first = performance.now() - t
  const times: number[] = []
  for (let i = 0; i < writes; i++) {
    t = performance.now()
    git(env, root, 'add', '-A')
    git(env, root, 'commit', '-q', '--allow-empty', '-m', `before write ${i}`)
    times.push(performance.now() - t)
    writeFileSync(join(root, 'src/m0', `f${i % 100}.ts`), `// edit ${i}\n`.repeat(200))
  }
  return { first, per: median(times) }
}

/** Per write: capture the paths it will touch, the write, commit; only capture + commit are timed. */
function ours(root: string, writes: number, options: { fsync: SyncMode; bytes?: number; files?: number }): number {
  const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: `bench-${Math.random().toString(36).slice(2)}`, fsync: options.fsync })
  const data = options.bytes ? Buffer.alloc(options.bytes, 97) : undefined
  const times: number[] = []
  for (let i = 0; i < writes; i++) {
    const paths = Array.from({ length: options.files ?? 1 }, (_, j) => `src/m${j}/f${j * 100 + (i % 100)}.ts`)
    const t0 = performance.now()
    s.capture({ key: `call:c${i}`, callId: `c${i}` }, paths)
    const t1 = performance.now()
    for (const p of paths) writeFileSync(join(root, p), data ?? `// edit ${i}\n`.repeat(200))
    const t2 = performance.now()
    s.commit({ callId: `c${i}` })
    times.push(t1 - t0 + (performance.now() - t2))
  }
  s.dispose()
  return median(times)
}

const out: string[] = []
const print = (line = '') => { out.push(line); console.log(line) }

// DSH_BENCH_ONLY_SHELL=1: only section 5.
const onlyShell = process.env.DSH_BENCH_ONLY_SHELL === '1'
if (!onlyShell) {
// 1. The headline: 10,000 files.
const big = generate('ws10k', 10_000)
const oursCapture = ours(big, WRITES, { fsync: 'capture' })
const oursAlways = ours(big, WRITES, { fsync: 'always' })
const oursOff = ours(big, WRITES, { fsync: 'off' })
const shadow = shadowGit(big, GIT_WRITES)
print('### Capture + commit per write, 10,000-file workspace (one ~2.5 KB file per write; medians)')
print()
print('| approach | per write (ms) | vs shadow git |')
print('|---|---|---|')
print(`| dsh-snapshot, fsync: capture (default: undo data durable before the write runs) | ${fmt(oursCapture)} | ${(shadow.per / oursCapture).toFixed(0)}× faster |`)
print(`| dsh-snapshot, fsync: always (verdicts durable at once too) | ${fmt(oursAlways)} | ${(shadow.per / oursAlways).toFixed(0)}× faster |`)
print(`| dsh-snapshot, fsync: off (same durability as the shadow git: none) | ${fmt(oursOff)} | ${(shadow.per / oursOff).toFixed(0)}× faster |`)
print(`| shadow git \`add -A && commit\` (warm) | ${fmt(shadow.per)} | 1× |`)
print(`| shadow git, first checkpoint (cold) | ${fmt(shadow.first)} | — |`)
print()

// 2a. Bytes touched.
print('### Cost grows with the bytes touched (10,000-file workspace, fsync: capture)')
print()
print('| bytes per write | files | per write (ms) | MB/s |')
print('|---|---|---|---|')
for (const [bytes, files] of [[1024, 1], [16 * 1024, 1], [256 * 1024, 1], [1024 * 1024, 1], [4 * 1024 * 1024, 1], [16 * 1024, 8]] as const) {
  // Prime the files at this size, so what is captured is `bytes` per file.
  for (let j = 0; j < files; j++) for (let i = 0; i < 100; i++) writeFileSync(join(big, `src/m${j}`, `f${j * 100 + i}.ts`), Buffer.alloc(bytes, 99))
  const ms = ours(big, Math.min(WRITES, bytes >= 1 << 20 ? 30 : WRITES), { fsync: 'capture', bytes, files })
  print(`| ${bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes >> 10} KiB`} | ${files} | ${fmt(ms)} | ${((bytes * files) / 1e6 / (ms / 1000)).toFixed(0)} |`)
}
print()

// 2b. Repository size.
print('### …not with the repository size (one ~2.5 KB file per write)')
print()
print('| files in workspace | dsh-snapshot (ms) | shadow git (ms) | ratio |')
print('|---|---|---|---|')
for (const n of [1_000, 10_000, 30_000]) {
  const root = n === 10_000 ? generate('ws10k-b', n) : generate(`ws${n}`, n)
  const o = ours(root, WRITES, { fsync: 'capture' })
  const g = shadowGit(root, Math.min(GIT_WRITES, 15))
  print(`| ${n.toLocaleString('en')} | ${fmt(o)} | ${fmt(g.per)} | ${(g.per / o).toFixed(0)}× |`)
  rmSync(root, { recursive: true, force: true })
}
print()

// 3. End to end through the waterfall.
async function harness(withSnapshot: boolean) {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  await ctx.plugin(WorkspaceTools, {})
  const fiber = withSnapshot ? ctx.plugin(SnapshotPlugin, {}) : undefined
  await fiber
  await new Promise(r => setTimeout(r, 0))
  const session = ctx.sessions.create(undefined, { cwd: big })
  const times: number[] = []
  for (let i = 0; i < WRITES; i++) {
    const t = performance.now()
    const r = await ctx.tools.execute({ session, callId: `w${i}`, name: 'write_file', arguments: { path: `src/m5/f${500 + (i % 100)}.ts`, content: `// write ${i}\n`.repeat(180) } })
    times.push(performance.now() - t)
    if (r.isError) throw new Error(r.content)
  }
  await fiber?.dispose()
  return median(times)
}
const bare = await harness(false)
const guarded = await harness(true)
print('### write_file through the real tools/execute waterfall (10,000-file workspace)')
print()
print('| | per call (ms) |')
print('|---|---|')
print(`| without dsh-snapshot | ${fmt(bare)} |`)
print(`| with dsh-snapshot (capture, fsync, commit) | ${fmt(guarded)} |`)
print(`| added by the snapshot | ${fmt(guarded - bare)} |`)
print()

// 4. shell: 'git' on a 10,000-file git workspace.
const repo = generate('repo10k', 10_000)
git({}, repo, 'init', '-q')
writeFileSync(join(repo, '.gitignore'), '.dsh/\n')
git({}, repo, 'add', '-A')
git({}, repo, 'commit', '-q', '-m', 'init')
{
  const s = new Snapshots({ root: repo, vault: join(repo, '.dsh'), sessionId: 'shell', fsync: 'capture' })
  const snap: number[] = []
  const back: number[] = []
  for (let i = 0; i < 10; i++) {
    let t = performance.now()
    await s.captureTree({ key: `call:s${i}`, callId: `s${i}` })
    snap.push(performance.now() - t)
    writeFileSync(join(repo, 'src/m1', `f${100 + i}.ts`), `// broken ${i}\n`)
    t = performance.now()
    const r = await s.rollback({ callId: `s${i}` }, 'bench')
    back.push(performance.now() - t)
    if (r.failed.length || r.restored.length !== 1) throw new Error(r.message)
  }
  s.dispose()
  print("### shell: 'git' (opt-in), 10,000-file git workspace")
  print()
  print('| step | median (ms) | vs shadow git checkpoint |')
  print('|---|---|---|')
  print(`| working-tree snapshot before a shell call (private index + objects) | ${fmt(median(snap))} | ${(shadow.per / median(snap)).toFixed(1)}× |`)
  print(`| rollback of one changed file | ${fmt(median(back))} | — |`)
  print()
}

}

// 5. shell: 'track' (the default): what a guarded bash call adds.
const SHELL_CALLS = Number(process.env.DSH_BENCH_SHELL_CALLS ?? 30)
type ShellMode = 'off' | 'track' | 'shadow'
const shellCommands: Record<string, (i: number) => string> = {
  'changes nothing': () => 'true',
  'changes 1 file': i => `echo "// e${i}" >> src/m2/f${200 + (i % 100)}.ts`,
  'changes 100 files': i => `for f in src/m3/*.ts; do echo "// e${i}" >> "$f"; done`,
}

/** A harness running bash calls on `root`: dsh-snapshot with shell tracking, or off; `shadow` checkpoints with git first. */
async function shellHarness(root: string, mode: ShellMode) {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  await ctx.plugin(WorkspaceTools, {})
  const fiber = ctx.plugin(SnapshotPlugin, { shell: mode === 'track' ? 'track' : 'off' })
  await fiber
  // The judge dsh-dstvalid is, minus the checks: hear what the call changed, promise a verdict, keep it.
  ctx.on('snapshot/changed', change => change.effects === 'shell' || undefined)
  ctx.on('tools/execute', async (exec, next) => {
    const r = await next()
    ctx.emit('snapshot/commit', { sessionId: exec.session.id, callId: exec.callId })
    return r
  })
  await new Promise(r => setTimeout(r, 0))
  const session = ctx.sessions.create(undefined, { cwd: root })
  const env = { GIT_DIR: join(scratch, `${root.split('/').pop()}.shell-shadow.git`), GIT_WORK_TREE: root }
  if (mode === 'shadow') {
    git(env, root, 'init', '-q')
    git(env, root, 'add', '-A')
    git(env, root, 'commit', '-q', '--allow-empty', '-m', 'base')
  }
  let n = 0
  return {
    async call(command: string): Promise<number> {
      const t = performance.now()
      if (mode === 'shadow') {
        git(env, root, 'add', '-A')
        git(env, root, 'commit', '-q', '--allow-empty', '-m', `before call ${n}`)
      }
      const r = await ctx.tools.execute({ session, callId: `b${n++}`, name: 'bash', arguments: { command } })
      if (r.isError) throw new Error(r.content)
      return performance.now() - t
    },
    dispose: () => fiber.dispose(),
  }
}

/**
 * The three modes side by side, each on its own copy of the workspace,
 * calls interleaved (off, track, shadow, off, …) so load drift on a shared
 * machine hits all three alike. Returns medians; the first call of each is
 * timed apart (it builds the tracker's picture).
 */
async function shellSideBySide(name: string, files: number, command: (i: number) => string, calls = SHELL_CALLS) {
  const modes: ShellMode[] = ['off', 'track', 'shadow']
  const roots = modes.map(m => {
    const root = generate(`${name}-${m}`, files)
    writeFileSync(join(root, '.gitignore'), '.dsh/\nnode_modules/\n')
    return root
  })
  const hs = await Promise.all(modes.map((m, i) => shellHarness(roots[i]!, m)))
  const first = await Promise.all(hs.map(h => h.call('true')))
  const times: number[][] = modes.map(() => [])
  for (let i = 0; i < calls; i++) {
    for (let m = 0; m < modes.length; m++) times[m]!.push(await hs[m]!.call(command(i)))
  }
  for (const h of hs) await h.dispose()
  for (const r of roots) rmSync(r, { recursive: true, force: true })
  const [off, track, shadow] = times.map(median) as [number, number, number]
  return { off, track, shadow, firstTrack: first[1]! }
}

{
  print(`### shell: 'track' (default): a guarded bash call, 10,000-file workspace (medians of ${SHELL_CALLS} calls, modes interleaved)`)
  print()
  print('| bash call | unguarded (ms) | tracked (ms) | added by tracking | shadow git checkpoint + call (ms) | added by shadow git | shadow git added ÷ tracking added |')
  print('|---|---|---|---|---|---|---|')
  let firstCall = 0
  for (const [name, command] of Object.entries(shellCommands)) {
    const r = await shellSideBySide('shell10k', 10_000, command)
    firstCall = r.firstTrack
    const added = r.track - r.off
    const addedShadow = r.shadow - r.off
    print(`| ${name} | ${fmt(r.off)} | ${fmt(r.track)} | ${fmt(added)} | ${fmt(r.shadow)} | ${fmt(addedShadow)} | ${(addedShadow / Math.max(added, 0.01)).toFixed(1)}× |`)
  }
  print()
  print(`First shell call of a session (builds the picture: packs every tracked file, watches every directory): ${fmt(firstCall)} ms.`)
  print()
  print('| files in workspace | call that changes nothing: added by tracking (ms) | added by shadow git (ms) |')
  print('|---|---|---|')
  for (const n of [1_000, 30_000]) {
    const r = await shellSideBySide(`shell${n}`, n, shellCommands['changes nothing']!, Math.min(SHELL_CALLS, 15))
    print(`| ${n.toLocaleString('en')} | ${fmt(r.track - r.off)} | ${fmt(r.shadow - r.off)} |`)
  }
  print()
}

rmSync(scratch, { recursive: true, force: true })
