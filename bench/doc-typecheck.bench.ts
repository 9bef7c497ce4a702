// doc-typecheck: one in-memory TypeScript program for every ```ts block
// (ours) against the naive ways of type-checking README examples: one
// `tsc --noEmit -p` over a temporary project holding every block, and one
// temporary project + `tsc` per block. Blocks: the repo's own docs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCommand } from 'dsh-common'
import { collectTsBlocks, typecheckDocs, workspacePaths, type DocBlock } from '../scripts/lib/doc-blocks.ts'
import { REPO_ROOT } from '../scripts/lib/workspace.ts'

const root = REPO_ROOT
const tsc = join(root, 'node_modules', '.bin', 'tsc')
const tsx = join(root, 'node_modules', '.bin', 'tsx')
const blocks = collectTsBlocks(root).filter(b => !b.optOut)
const runs = Number(process.env.DSH_BENCH_RUNS ?? 3)

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function timed(fn: () => Promise<number> | number, n: number): Promise<{ ms: number; errors: number }> {
  const times: number[] = []
  let errors = 0
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    errors = await fn()
    times.push(performance.now() - start)
  }
  return { ms: median(times), errors }
}

/** A temporary project inside the repo (so bare imports resolve through its node_modules). */
function writeProject(parent: string, group: DocBlock[]): string {
  const dir = mkdtempSync(join(parent, 'p-'))
  const files = group.map((b, i) => {
    const name = `block-${i}.ts`
    writeFileSync(join(dir, name), b.code)
    return name
  })
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    extends: join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, composite: false, incremental: false, moduleDetection: 'force', paths: workspacePaths(root) },
    files,
    include: [],
  }))
  return dir
}

async function tscErrors(dir: string): Promise<number> {
  const r = await runCommand([tsc, '--noEmit', '-p', join(dir, 'tsconfig.json')], { cwd: dir, timeoutMs: 300_000 })
  return r.stdout.split('\n').filter(l => /^block-\d+\.ts\(\d+,\d+\): error TS/.test(l)).length
}

const scratch = join(root, 'node_modules', '.cache', 'doc-typecheck-bench')
mkdirSync(scratch, { recursive: true })
const parent = mkdtempSync(join(scratch, 'run-'))
try {
  const inProcess = await timed(() => typecheckDocs({ root }).diagnostics.length, runs)
  const cli = await timed(async () => {
    const r = await runCommand([tsx, join(root, 'scripts', 'doc-typecheck.ts')], { cwd: root, timeoutMs: 300_000 })
    return r.stdout.split('\n').filter(l => /\(block at line \d+, \+\d+:\d+\)/.test(l)).length
  }, runs)
  const onceDir = writeProject(parent, blocks)
  const once = await timed(() => tscErrors(onceDir), runs)
  const perBlockDirs = blocks.map(b => writeProject(parent, [b]))
  const perBlock = await timed(async () => {
    let errors = 0
    for (const dir of perBlockDirs) errors += await tscErrors(dir)
    return errors
  }, 1)

  const ours = cli.ms
  const row = (name: string, r: { ms: number; errors: number }, n: number) =>
    `| ${name} | ${(r.ms / 1000).toFixed(2)} s | ${r.errors} | ${n} | ${(r.ms / ours).toFixed(2)}× |`
  console.log(`${blocks.length} checked blocks from the repo's docs; median of ${runs} runs (per-block: 1 run)\n`)
  console.log('| approach | wall time | errors found | runs | vs ours (CLI) |')
  console.log('|---|---|---|---|---|')
  console.log(row('ours: `tsx scripts/doc-typecheck.ts` (one in-memory program)', cli, runs))
  console.log(row('ours, in-process only (no tsx start-up)', inProcess, runs))
  console.log(row('`tsc --noEmit -p` over one temp project of all blocks', once, runs))
  console.log(row('one temp project + `tsc --noEmit` per block', perBlock, 1))
} finally {
  rmSync(parent, { recursive: true, force: true })
}
