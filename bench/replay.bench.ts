/**
 * `pnpm bench replay`: real multi-file commits replayed through the guarded
 * harness, one file per call, in one turn, by a scripted model; and real bug
 * fixes reverted (the fix's tests kept, its source written back as before
 * the fix) by a model that writes the bug and stops. Each is judged against
 * the project's naive check (its own type-check and full tests, cold) on both
 * sides of the change, in the same run. The corpus is bench/replay-corpus.ts.
 *
 * Goal: 0 good commits with any write undone at the end of the turn; 0
 * reverted bugs surviving the turn.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { runCommand } from 'dsh-common'
import type { SessionEvent } from 'dsh-session'
import { naiveSteps, type NaiveStep } from '../packages/dsh-cli/src/try/naive.ts'
import { REPLAY_PROJECTS, type ReplayItem, type ReplayProject } from './replay-corpus.ts'

const USAGE = `Usage: pnpm bench replay [--project NAME]… [--commit PREFIX]… [--work DIR] [--mirrors DIR] [--json FILE]

Replays the corpus of bench/replay-corpus.ts through the guarded harness
(\`dsh run --script --json\` with the suite's cordis.yml, a process per
replay): for each good commit, the parent is checked out and installed,
then the commit's files are written one per call, in one turn, and the
model stops; for each bug fix, the fix is checked out and its non-test
files are written back as they were before it (the bug), then the model
stops. Before each replay the project's naive check (its own type-check
and full tests, cold) runs on both sides of the change. Prints each step's
verdict as it comes, the messages the model saw, a table, and the goal:
0 good commits with any write undone, 0 reverted bugs surviving the turn.
Files a mirror lacks are left out of the checkout (said). On 2 busy cores
the whole corpus takes about an hour (ts-graphviz's naive check is minutes).

Options:
  --project NAME   only this project (repeatable; have: ${REPLAY_PROJECTS.map(p => p.name).join(', ')})
  --commit PREFIX  only the corpus items whose commit starts with PREFIX (repeatable)
  --work DIR       where the clones live (kept between runs: clones and
                   installs are reused); default: $TMPDIR/dsh-replay
  --mirrors DIR    bare mirrors to clone from, as DIR/<owner>+<name>/repo
                   (the search tool's fetch); default: /work/.mirror when it
                   exists; a project without a mirror is cloned from GitHub
  --json FILE      also write the whole report (every message in full) as JSON
  -h, --help       show this help

Installs use the project's own lockfile and package manager (pnpm at the
version its packageManager field names; --ignore-scripts); Go modules need
nothing installed. Nothing of the projects is written outside --work.
Exit status: 0 the goal was met, 1 it was not (or a step failed), 2 bad usage.
`

interface Args { projects: string[]; commits: string[]; work: string; mirrors?: string; json?: string }

function parse(argv: string[]): Args {
  const args: Args = { projects: [], commits: [], work: join(tmpdir(), 'dsh-replay') }
  if (existsSync('/work/.mirror')) args.mirrors = '/work/.mirror'
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const value = () => {
      const v = argv[++i]
      if (v === undefined || v.startsWith('--')) usage(`${a} needs a value`)
      return v!
    }
    if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE)
      process.exit(0)
    } else if (a === '--project') args.projects.push(value())
    else if (a === '--commit') args.commits.push(value())
    else if (a === '--work') args.work = value()
    else if (a === '--mirrors') args.mirrors = value()
    else if (a === '--json') args.json = value()
    else usage(`unknown argument ${a}`)
  }
  for (const p of args.projects) if (!REPLAY_PROJECTS.some(r => r.name === p)) usage(`no project ${p} (have: ${REPLAY_PROJECTS.map(r => r.name).join(', ')})`)
  return args
}

function usage(why: string): never {
  process.stderr.write(`replay: ${why} (see pnpm bench replay --help)\n`)
  process.exit(2)
}

const log = (line: string) => process.stderr.write(`${line}\n`)
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const load = () => loadavg()[0]!.toFixed(1)

// ── git ─────────────────────────────────────────────────────────────────

function git(cwd: string, args: string[], input?: string): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', input, maxBuffer: 1 << 28 })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}): ${r.stderr.trim()}`)
  return r.stdout
}

/** A file's bytes at a commit, or null when the commit has no such file. */
function blobAt(clone: string, rev: string, path: string): Buffer | null {
  const r = spawnSync('git', ['cat-file', 'blob', `${rev}:${path}`], { cwd: clone, maxBuffer: 1 << 28 })
  return r.status === 0 ? r.stdout : null
}

/** Files of `rev` whose content the clone does not hold (a mirror may leave its largest files out). */
function missingBlobs(clone: string, rev: string): string[] {
  const entries = git(clone, ['ls-tree', '-r', rev]).split('\n').filter(Boolean).map(l => /^\d+ blob ([0-9a-f]+)\t(.*)$/.exec(l)).filter(m => m !== null)
  const check = git(clone, ['cat-file', '--batch-check'], entries.map(m => m![1]).join('\n') + '\n').split('\n')
  return entries.filter((_, i) => check[i]?.endsWith(' missing')).map(m => m![2]!)
}

function cloneOf(project: ReplayProject, args: Args): string {
  const clone = join(args.work, project.name)
  const mirror = args.mirrors ? join(args.mirrors, project.repo.replace('/', '+'), 'repo') : undefined
  const source = mirror && existsSync(mirror) ? mirror : `https://github.com/${project.repo}.git`
  if (!existsSync(join(clone, '.git'))) {
    log(`${project.name}: cloning ${source}…`)
    mkdirSync(args.work, { recursive: true })
    git(args.work, ['clone', '-q', '--no-checkout', source, clone])
  }
  const absent = project.items.filter(i => spawnSync('git', ['cat-file', '-e', `${i.commit}^{commit}`], { cwd: clone }).status !== 0)
  if (absent.length) {
    log(`${project.name}: fetching ${source} (${absent.length} pinned commit(s) not in the clone)…`)
    git(clone, ['fetch', '-q', source, '+refs/heads/*:refs/remotes/origin/*'])
  }
  return clone
}

/** Check out `rev` exactly (files the clone lacks left out), keeping installed dependencies and ignored outputs. */
function checkout(clone: string, rev: string): string[] {
  const missing = missingBlobs(clone, rev)
  git(clone, ['sparse-checkout', 'set', '--no-cone', '/*', ...missing.map(p => `!/${p}`)])
  git(clone, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '-f', rev])
  git(clone, ['clean', '-fdq'])
  return missing
}

// ── install ─────────────────────────────────────────────────────────────

/** The project's package manager command: pnpm at the version its packageManager field names. */
function pnpmArgv(clone: string): string[] {
  const pkg = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')) as { packageManager?: string }
  const version = /^pnpm@(\d+[^+]*)/.exec(pkg.packageManager ?? '')?.[1]
  const ours = spawnSync('pnpm', ['--version'], { encoding: 'utf8' }).stdout.trim()
  // Our pnpm when it is the same major (its version switch cannot verify a download here); else that version through npx.
  if (!version || version.split('.')[0] === ours.split('.')[0]) return ['pnpm', '--config.manage-package-manager-versions=false']
  return ['npx', '--yes', `pnpm@${version}`]
}

async function install(project: ReplayProject, clone: string, rev: string): Promise<number> {
  if (project.language !== 'typescript') return 0
  const lock = git(clone, ['rev-parse', `${rev}:pnpm-lock.yaml`]).trim()
  const stamp = join(clone, 'node_modules', '.dsh-replay-lock')
  const t = performance.now()
  const pm = pnpmArgv(clone)
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== lock) {
    log(`  installing (${pm.slice(0, 3).join(' ')} install --frozen-lockfile --ignore-scripts)…`)
    const r = await runCommand([...pm, 'install', '--frozen-lockfile', '--ignore-scripts'], { cwd: clone, timeoutMs: 900_000, env: { CI: '1' } })
    if (r.exitCode !== 0) throw new Error(`${project.name}: install failed at ${rev.slice(0, 8)}: ${r.output.slice(-2000)}`)
    writeFileSync(stamp, lock)
  }
  for (const step of project.prepare ?? []) {
    log(`  preparing (${['pnpm', ...step].join(' ')})…`)
    const r = await runCommand([...pm, ...step], { cwd: clone, timeoutMs: 300_000, env: { CI: '1' } })
    if (r.exitCode !== 0) throw new Error(`${project.name}: ${step.join(' ')} failed at ${rev.slice(0, 8)}: ${r.output.slice(-2000)}`)
  }
  return performance.now() - t
}

// ── the naive check ─────────────────────────────────────────────────────

interface NaiveRun {
  ms: number
  steps: { label: string; exitCode: number | null; ms: number; problems: number }[]
  /** What failed, one key per diagnostic or failing test (lines and timings left out). */
  problems: string[]
}

const ANSI = /\x1b\[[0-9;]*m/g

/** The problems a naive step reports: tsc diagnostics, vitest's failing tests, go's build errors, vet findings and failing tests. */
function problemsOf(step: NaiveStep, output: string, exitCode: number | null): string[] {
  const lines = output.replace(ANSI, '').split('\n')
  const keys = new Set<string>()
  for (const l of lines) {
    let m: RegExpExecArray | null
    if ((m = /^(\S+?)\(\d+,\d+\): error (TS\d+): (.*)$/.exec(l))) keys.add(`${m[1]} ${m[2]} ${m[3]}`)
    else if ((m = /^\s*FAIL\s+(\S.*?)(?:\s+\d+ms)?$/.exec(l)) && step.label.startsWith('vitest')) keys.add(`test ${m[1]}`)
    else if ((m = /^\s*--- FAIL: (\S+)/.exec(l))) keys.add(`go test ${m[1]}`)
    else if ((m = /^FAIL\s+(\S+)\s+\[(build failed|setup failed)\]/.exec(l))) keys.add(`go ${m[1]} ${m[2]}`)
    else if ((m = /^(?:\.\/)?([\w./-]+\.go):\d+(?::\d+)?: (.*)$/.exec(l))) keys.add(`${step.label.split(' ')[1]} ${m[1]}: ${m[2]}`)
  }
  if (!keys.size && exitCode !== 0) keys.add(`${step.label} exit ${exitCode}`)
  return [...keys]
}

async function naive(root: string, language: ReplayProject['language']): Promise<NaiveRun> {
  const started = performance.now()
  const steps: NaiveRun['steps'] = []
  const problems: string[] = []
  for (const step of naiveSteps(root, language)) {
    const r = await runCommand(step.argv, { cwd: root, timeoutMs: 1_800_000, maxOutputBytes: 16 << 20, env: { CI: '1', NO_COLOR: '1', FORCE_COLOR: '0', GOFLAGS: '-count=1' } })
    const found = problemsOf(step, r.output, r.exitCode)
    steps.push({ label: step.label, exitCode: r.exitCode, ms: r.durationMs, problems: found.length })
    problems.push(...found)
  }
  return { ms: performance.now() - started, steps, problems }
}

/** How the second side compares with the first: new problems make it worse. */
function compare(a: NaiveRun, b: NaiveRun): { verdict: 'worse' | 'better' | 'same'; added: string[]; removed: string[] } {
  const added = b.problems.filter(p => !a.problems.includes(p))
  const removed = a.problems.filter(p => !b.problems.includes(p))
  return { verdict: added.length ? 'worse' : removed.length ? 'better' : 'same', added, removed }
}

const describeNaive = (n: NaiveRun) => `${n.steps.map(s => `${s.label} ${s.exitCode === 0 ? 'ok' : `exit ${s.exitCode}`}${s.problems ? ` (${s.problems} problems)` : ''} ${sec(s.ms)}`).join(', ')}`

// ── the replay ──────────────────────────────────────────────────────────

const TEST_FILE: Record<ReplayProject['language'], RegExp> = {
  typescript: /(?:\.(?:test|spec)\.[cm]?[jt]sx?$)|(?:^|\/)(?:__tests__|tests?)\//,
  go: /_test\.go$/,
}

interface Step {
  path: string
  /** The result's first line, as the model saw it. */
  verdict: string
}

interface Message { type: string; text: string }

interface ItemReport {
  project: string
  item: ReplayItem
  parent: string
  missing: string[]
  installMs: number
  naive: { before: NaiveRun; after: NaiveRun; comparison: ReturnType<typeof compare> }
  steps: Step[]
  /** Everything the model was sent after the prompt: tool results, injected context, refused stops. */
  messages: Message[]
  reason: string | undefined
  turnMs: number
  /** Files whose content at the end of the turn is not the one the item expects (good: the commit's; bug: the fix's). */
  differing: string[]
  /** Files whose content at the end of the turn is the bug's (bug items only). */
  buggy: string[]
  loadStart: string
  loadEnd: string
}

const contentOf = (root: string, path: string): Buffer | null => existsSync(join(root, path)) ? readFileSync(join(root, path)) : null
const same = (a: Buffer | null, b: Buffer | null) => a === null || b === null ? a === b : a.equals(b)

/** Put `files` in the workspace: bytes, or deleted when null. */
function place(root: string, files: Map<string, Buffer | null>) {
  for (const [path, bytes] of files) {
    const abs = join(root, path)
    if (bytes === null) {
      if (existsSync(abs)) unlinkSync(abs)
    } else {
      mkdirSync(dirname(abs), { recursive: true })
      writeFileSync(abs, bytes)
    }
  }
}

/** The item's files as they must be written (`to`), and the revision the replay starts from. */
function planOf(project: ReplayProject, item: ReplayItem, clone: string) {
  const parent = git(clone, ['rev-parse', `${item.commit}^`]).trim()
  const changed = git(clone, ['diff', '--name-only', '--no-renames', parent, item.commit]).split('\n').filter(Boolean)
  if (changed.some(p => /(?:^|\/)(?:package\.json|pnpm-lock\.yaml|go\.mod|go\.sum)$/.test(p))) throw new Error(`${item.commit.slice(0, 8)} changes its dependencies: not a replay item (the install is the parent's)`)
  const expected = item.kind === 'good' ? changed : changed.filter(p => !TEST_FILE[project.language].test(p) && !p.startsWith('.changeset/') && !p.endsWith('.md'))
  const order = [...item.order].sort()
  if (JSON.stringify(order) !== JSON.stringify([...expected].sort())) {
    throw new Error(`${project.name} ${item.commit.slice(0, 8)}: the corpus order (${item.order.join(', ')}) is not the ${item.kind === 'good' ? 'changed files' : 'changed non-test files'} of the commit (${expected.join(', ')})`)
  }
  const start = item.kind === 'good' ? parent : item.commit
  const end = item.kind === 'good' ? item.commit : parent
  const to = new Map(item.order.map(p => [p, blobAt(clone, end, p)] as const))
  const from = new Map(item.order.map(p => [p, blobAt(clone, start, p)] as const))
  return { parent, start, to, from }
}

/** One step per file: a write_file of its new content, or an rm through the shell. */
function scriptOf(item: ReplayItem, to: Map<string, Buffer | null>): string {
  return item.order.map((path, i) => {
    const bytes = to.get(path)!
    const call = bytes === null
      ? { name: 'bash', arguments: { command: `rm ${path}` } }
      : { name: 'write_file', arguments: { path, content: bytes.toString('utf8') } }
    return JSON.stringify({ text: `Step ${i + 1} of ${item.order.length}: ${path}.`, toolCalls: [call] })
  }).join('\n') + '\n'
}

const firstLine = (text: string) => text.split('\n')[0]!.slice(0, 300)
/** A result's first line, and the verdict's own line when the guard added one below it (`kept for now: …`, `warning: …`). */
const verdictOf = (text: string) => {
  const lines = text.split('\n')
  const said = lines.slice(1).find(l => /^(kept for now|warning|rolled back|undone)\b/.test(l))
  return [lines[0]!, said].filter(Boolean).join(' · ').slice(0, 400)
}

async function replay(project: ReplayProject, item: ReplayItem, clone: string, args: Args, index: string): Promise<ItemReport> {
  const loadStart = load()
  const { parent, start, to, from } = planOf(project, item, clone)
  log(`\n### ${index} ${project.name} ${item.commit.slice(0, 8)} (${item.kind === 'good' ? 'good commit' : 'reverted fix'}): ${item.title}`)
  log(`  checking out ${start.slice(0, 8)} (${item.kind === 'good' ? 'the parent' : 'the fix'})… load ${loadStart}`)
  const missing = checkout(clone, start)
  if (missing.length) log(`  ${missing.length} file(s) of this commit are not in the mirror, left out: ${missing.join(', ')}`)
  if (item.order.some(p => missing.includes(p))) throw new Error(`${item.commit.slice(0, 8)}: a file to write is not in the mirror`)
  const installMs = await install(project, clone, start)

  log(`  naive check on the ${item.kind === 'good' ? 'parent' : 'fix'}…`)
  const before = await naive(clone, project.language)
  log(`    ${describeNaive(before)}`)
  place(clone, to)
  log(`  naive check on the ${item.kind === 'good' ? 'commit' : 'bug (the fix reverted)'}…`)
  const after = await naive(clone, project.language)
  log(`    ${describeNaive(after)}`)
  const comparison = compare(before, after)
  log(`    naive verdict: the ${item.kind === 'good' ? 'commit' : 'bug'} is ${comparison.verdict}${comparison.added.length ? ` (+${comparison.added.length}: ${comparison.added.slice(0, 3).join('; ')})` : ''}${comparison.removed.length ? ` (−${comparison.removed.length})` : ''}`)
  place(clone, from)
  git(clone, ['clean', '-fdq'])
  const dirty = git(clone, ['status', '--porcelain']).trim()
  if (dirty) throw new Error(`${item.commit.slice(0, 8)}: the workspace is not back at ${start.slice(0, 8)} before the replay: ${dirty}`)

  const scratch = join(args.work, 'runs', `${project.name}-${item.commit.slice(0, 8)}-${Date.now()}`)
  mkdirSync(scratch, { recursive: true })
  const script = join(scratch, 'script.jsonl')
  writeFileSync(script, scriptOf(item, to))
  const prompt = item.kind === 'good'
    ? `Make this change, one file per call: ${item.title}`
    : `Write ${item.order.join(', ')} as shown, one file per call, then stop.`
  log(`  replaying ${item.order.length} write(s) in one turn (dsh run --script, a process of its own)…`)
  try {
    const t = performance.now()
    const { messages, steps, reason, stderr } = await dshRun(clone, script, join(scratch, 'vault'), prompt, item.order)
    const turnMs = performance.now() - t
    const differing = item.order.filter(p => !same(contentOf(clone, p), item.kind === 'good' ? to.get(p)! : from.get(p)!))
    const buggy = item.kind === 'bug' ? item.order.filter(p => same(contentOf(clone, p), to.get(p)!)) : []
    const loadEnd = load()
    log(`  turn ${reason ?? 'not ended'} in ${sec(turnMs)} (load ${loadEnd}); ${item.kind === 'good'
      ? differing.length ? `UNDONE at the end: ${differing.join(', ')}` : 'every write kept'
      : buggy.length ? `the BUG SURVIVED in ${buggy.join(', ')}` : differing.length ? `neither fix nor bug in ${differing.join(', ')}` : 'the bug is gone (the fix restored byte for byte)'}`)
    const warnings = stderr.split('\n').filter(l => /^(warn|error) /.test(l))
    if (warnings.length) log(`  harness warnings: ${warnings.slice(0, 3).join(' | ')}`)
    return { project: project.name, item, parent, missing, installMs, naive: { before, after, comparison }, steps, messages, reason, turnMs, differing, buggy, loadStart, loadEnd }
  } finally {
    checkout(clone, start)
  }
}

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'dsh-cli', 'src', 'bin.ts')

/**
 * One turn of `dsh run --script --json` in a process of its own (a fresh
 * guard per replay, as a user's `dsh run` has: nothing resolved in an
 * earlier replay, before a reinstall, is reused). Streams the session's
 * events and shows each result as it comes.
 */
function dshRun(root: string, script: string, vault: string, prompt: string, order: string[]): Promise<{ messages: Message[]; steps: Step[]; reason: string | undefined; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'run', prompt, '--workspace', root, '--script', script, '--vault', vault, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const messages: Message[] = []
    const steps: Step[] = []
    let reason: string | undefined
    let stderr = ''
    let prompted = false
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8') })
    createInterface({ input: child.stdout }).on('line', line => {
      let e: SessionEvent
      try {
        e = JSON.parse(line) as SessionEvent
      } catch {
        return // not an event
      }
      if (e.type === 'tool/result') {
        const path = order[steps.length] ?? '?'
        steps.push({ path, verdict: verdictOf(e.data.content) })
        messages.push({ type: `tool/result ${e.data.name}`, text: e.data.content })
        log(`    step ${steps.length}/${order.length} ${path}: ${verdictOf(e.data.content)}`)
      } else if (e.type === 'context/message') {
        messages.push({ type: `context/message ${e.data.source}`, text: e.data.text })
        log(`    context (${e.data.source}): ${firstLine(e.data.text)}`)
      } else if (e.type === 'user/message') {
        // The prompt itself is not an answer to the model's work.
        if (prompted) {
          messages.push({ type: 'user/message', text: e.data.text })
          log(`    told the model: ${firstLine(e.data.text)}`)
        }
        prompted = true
      } else if (e.type === 'error') {
        messages.push({ type: 'error', text: e.data.message })
        log(`    error: ${firstLine(e.data.message)}`)
      } else if (e.type === 'turn/end') reason = e.data.reason
    })
    child.on('error', reject)
    child.on('close', code => {
      if (code !== 0 && code !== 1) reject(new Error(`dsh run exited with ${code}: ${stderr.slice(-2000)}`))
      else resolve({ messages, steps, reason, stderr })
    })
  })
}

// ── main ────────────────────────────────────────────────────────────────

const args = parse(process.argv.slice(2))
const projects = REPLAY_PROJECTS.filter(p => !args.projects.length || args.projects.includes(p.name))
  .map(p => ({ ...p, items: p.items.filter(i => !args.commits.length || args.commits.some(c => i.commit.startsWith(c))) }))
  .filter(p => p.items.length)
if (!projects.length) usage(`no corpus item matches ${[...args.projects, ...args.commits].join(', ')}`)
const total = projects.reduce((n, p) => n + p.items.length, 0)
log(`replay: ${total} item(s) of ${projects.map(p => p.name).join(', ')}; work dir ${args.work}; load ${load()} on ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores`)

const reports: ItemReport[] = []
const failures: string[] = []
let n = 0
for (const project of projects) {
  let clone: string
  try {
    clone = cloneOf(project, args)
  } catch (error) {
    failures.push(`${project.name}: ${(error as Error).message}`)
    log(`replay: ${project.name} skipped: ${(error as Error).message}`)
    continue
  }
  for (const item of project.items) {
    try {
      reports.push(await replay(project, item, clone, args, `${++n}/${total}`))
    } catch (error) {
      failures.push(`${project.name} ${item.commit.slice(0, 8)}: ${(error as Error).message}`)
      log(`replay: ${project.name} ${item.commit.slice(0, 8)} failed: ${(error as Error).message}`)
    }
  }
}

const rows = reports.map(r => {
  const writes = r.item.order.length
  const rolled = r.steps.filter(s => s.verdict.startsWith('rolled back')).length
  const end = r.item.kind === 'good'
    ? r.differing.length ? `${r.differing.length} undone ✗` : 'all kept ✓'
    : r.buggy.length ? 'bug survived ✗' : r.differing.length ? 'neither ✗' : 'bug gone ✓'
  const naiveVerdict = `${r.naive.comparison.verdict} (${r.naive.before.problems.length} → ${r.naive.after.problems.length} problems)`
  // A naive guard runs its whole check after every write: writes × one cold run.
  const naiveTurn = r.naive.before.ms * writes
  return `| ${r.project} | ${r.item.commit.slice(0, 8)} ${r.item.kind} | ${writes} | ${rolled} | ${r.reason ?? '—'} | ${end} | ${naiveVerdict} | ${sec(r.turnMs)} | ${sec(r.naive.before.ms)} | ${(naiveTurn / r.turnMs).toFixed(2)}× | ${r.loadStart}–${r.loadEnd} |`
})
console.log('\n| project | commit | writes | rolled back at once | turn | end of turn | naive: after vs before | guarded turn | naive, one run | naive × writes / turn | load |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|')
console.log(rows.join('\n'))

console.log('\nmessages the model saw, per item (first line of each):')
for (const r of reports) {
  console.log(`\n${r.project} ${r.item.commit.slice(0, 8)} (${r.item.kind}):`)
  for (const m of r.messages) console.log(`  ${m.type}: ${verdictOf(m.text)}`)
}

const goodUndone = reports.filter(r => r.item.kind === 'good' && r.differing.length).length
const bugsSurvived = reports.filter(r => r.item.kind === 'bug' && (r.buggy.length || r.differing.length)).length
const naiveMissed = reports.filter(r => r.item.kind === 'bug' && r.naive.comparison.verdict !== 'worse').map(r => r.item.commit.slice(0, 8))
const goods = reports.filter(r => r.item.kind === 'good').length
console.log(`\ngood commits with any write undone: ${goodUndone} of ${goods}; reverted bugs surviving the turn: ${bugsSurvived} of ${reports.length - goods} (goal 0 / 0)`)
if (naiveMissed.length) console.log(`reverted bugs the naive check does not see as worse (the fix's tests do not catch them here): ${naiveMissed.join(', ')}`)
if (failures.length) console.log(`not replayed: ${failures.join('; ')}`)
if (args.json) {
  writeFileSync(args.json, JSON.stringify({ load: loadavg(), reports, failures }, null, 2))
  console.log(`report: ${args.json}`)
}
rmSync(join(args.work, 'runs'), { recursive: true, force: true })
process.exitCode = goodUndone || bugsSurvived || failures.length ? 1 : 0
