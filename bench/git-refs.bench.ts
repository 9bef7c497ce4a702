// git-refs: what recording a shell call's git state (HEAD, every ref, the
// index) costs per call, ours (read from .git, the index hard-linked) vs the
// naive way (git rev-parse + git for-each-ref + a copy of the index), in the
// same run on the same repositories: a small one (a copy of `DSH_BENCH_REPO`
// when given, e.g. a clone of unjs/defu; else a generated 100-file repo) and
// a generated 20,000-file repository with 2,000 loose tags. Goal: ≤ 1 ms per
// call on the small repository, and ≥ 10× under the naive way.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Snapshots } from 'dsh-snapshot'

const CALLS = Number(process.env.DSH_BENCH_CALLS ?? 200)
const scratch = mkdtempSync(join(tmpdir(), 'dsh-refs-bench-'))

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', '-c', 'gc.auto=0', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })

function generated(name: string, files: number, tags: number): string {
  const root = join(scratch, name)
  for (let i = 0; i < files; i++) {
    const dir = join(root, 'src', `m${Math.floor(i / 100)}`)
    if (i % 100 === 0) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.ts`), `export const v${i} = ${i}\n`)
  }
  writeFileSync(join(root, '.gitignore'), '.dsh/\n')
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'init')
  for (let i = 0; i < tags; i++) git(root, 'update-ref', `refs/tags/t${i}`, 'HEAD')
  return root
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

function ours(root: string): number {
  const s = new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'bench', fsync: 'off' })
  const times: number[] = []
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now()
    s.captureRefs({ key: `call:${i}`, callId: `c${i}` })
    times.push(performance.now() - t)
    s.commit({ callId: `c${i}` })
  }
  s.clear()
  return median(times)
}

function naive(root: string): number {
  const times: number[] = []
  for (let i = 0; i < Math.min(CALLS, 50); i++) {
    const t = performance.now()
    git(root, 'rev-parse', '--symbolic-full-name', 'HEAD')
    git(root, 'for-each-ref', '--format=%(objectname) %(refname)')
    copyFileSync(join(root, '.git/index'), join(scratch, 'index.copy'))
    times.push(performance.now() - t)
  }
  return median(times)
}

const small = process.env.DSH_BENCH_REPO ? join(scratch, 'repo') : generated('small', 100, 0)
if (process.env.DSH_BENCH_REPO) cpSync(process.env.DSH_BENCH_REPO, small, { recursive: true })
const big = generated('big', 20_000, 2_000)
console.log('| repository | ours (median ms per call) | naive: git rev-parse + for-each-ref + index copy (ms) | ratio |')
console.log('|---|---|---|---|')
for (const [name, root] of [[process.env.DSH_BENCH_REPO ? `${process.env.DSH_BENCH_REPO}` : 'generated 100 files', small], ['generated 20,000 files, 2,000 loose tags', big]] as const) {
  const a = ours(root)
  const b = naive(root)
  console.log(`| ${name} | ${a.toFixed(3)} | ${b.toFixed(2)} | ${(b / a).toFixed(0)}× |`)
}
rmSync(scratch, { recursive: true, force: true })
