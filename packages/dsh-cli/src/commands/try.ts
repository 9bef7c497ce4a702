import { rmSync } from 'node:fs'
import { killProcessGroups } from 'dsh-common'
import { bool, parseArgs, str, UsageError, workspaceArg, type Command } from '../command.ts'
import { ConfigError } from '../harness.ts'
import { exitOnStopSignals } from '../signals.ts'
import type { ProbeOutcome, TryReport } from '../try/run.ts'

const usage = `Usage: dsh try --workspace DIR [--module FILE] [--function NAME] [--config FILE] [--no-naive] [--naive-timeout SECONDS] [--timeout SECONDS] [--restart] [--keep] [--json]

What to run before trusting the guard with a repository. On a throw-away copy
of DIR (dependency directories such as node_modules are symlinked, .git and
.dsh left out) it boots the guard from cordis.yml without a model and makes a
fixed set of probe edits derived from the project itself, each as one tool
call through the guard, first write at once (no warm-up):

  1. a comment in its most-imported source module (the most-imported one
     that has a function, when the first has none)         expected: kept
  2. a body-only edit of a function there                   expected: kept
  3. an exported function renamed, breaking its importers   expected: rolled back
  4. a behaviour change its tests catch (the function throws) expected: rolled back
  5. a syntax error in that module                          expected: rolled back
  6. a new file with a type error next to it                expected: rolled back

It prints each verdict with the time it took (wall clock, and the CPU time of
the guard: this process, its workers and the runners it started) and the load
average when it ended, next to the naive full check measured once in the same
run on a second copy (TypeScript: tsc -b --force or tsc --noEmit, then vitest
run or jest; Go: go build, go vet, go test ./...; Python: pytest), and the peak
resident memory of the guard and of the naive check. Each row says what the
guard ran, and which test files when the test check said why (e.g. "13 of 94
related test files: those that ran \`raw\`", the map of executed functions).
On a shared machine compare the CPU times, or wall times at a like load. A
probe that cannot be made on this project (no importers, no tests, no
function) is listed with the reason. A breaking probe the guard kept is undone on the copy before
the next one. DIR itself is only read: that nothing in it changed is checked
at the end.

Languages: TypeScript/JavaScript (tsconfig.json or package.json), Go (go.mod),
Python (pyproject.toml, setup.py, setup.cfg or .py files).

Options:
  --workspace DIR          the project to try (required; only read)
  --module FILE            make the probes in FILE (relative to DIR; another file
                           must import it) instead of the most-imported module
  --function NAME          make the comment, body-only and behaviour probes on
                           the function NAME (a function with a body; in the
                           module asked for, else in the most-imported module
                           that has one)
  --config FILE            cordis.yml to boot the guard from (default: the suite's own)
  --no-naive               skip the naive check
  --naive-timeout SECONDS  time one naive step may take (default 1800; a step
                           past it is killed and marked timed out)
  --timeout SECONDS        time one probe may take (default: no limit); a probe
                           past it is reported "timed out after N s", its call is
                           aborted (test runs killed; a type-check past the
                           guard's own timeoutMs answers then), and the next
                           probe starts once the guard has settled
  --restart                after the probes, stop the guard and start it again on
                           the same copy, as a new dsh process would (its vault
                           kept: the type-check's build-info cache and the map of
                           executed functions), and make the probes again; their
                           rows say "after a restart"
  --keep                   keep the copies (their directory is printed)
  --json                   print the report as JSON on stdout
  -h, --help               show this help

Progress goes to stderr. SIGINT, SIGTERM or SIGHUP stops the run: the processes
it started are killed and the copies removed (even with --keep), then it exits
with 130, 143 or 129. Exit status otherwise: 0 every probe that could be made got
the expected verdict, 1 some did not (a timed-out probe did not, or DIR changed),
2 bad usage or bad input.
`

export const tryCommand: Command = {
  name: 'try',
  summary: 'probe the guard on a copy of a project: verdicts and times next to the naive check',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', module: 'string', function: 'string', config: 'string', 'no-naive': 'boolean', 'naive-timeout': 'string', timeout: 'string', restart: 'boolean', keep: 'boolean', json: 'boolean' } }, 'try')
    const workspace = workspaceArg(args, 'try')
    const seconds = (flag: string, fallback?: string): number | undefined => {
      const value = str(args, flag) ?? fallback
      if (value === undefined) return undefined
      if (!/^\d+$/.test(value) || Number(value) <= 0) throw new UsageError(`dsh try: --${flag} needs a whole number of seconds, got "${value}"`)
      return Number(value) * 1000
    }
    const naiveTimeoutMs = seconds('naive-timeout', '1800')!
    const probeTimeoutMs = seconds('timeout')
    const started = performance.now()
    const progress = (line: string) => io.stderr(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`)
    let copies: string | undefined
    // A stop signal kills what the run started and removes the copies before exiting (process.exit skips the run's own clean-up).
    const release = exitOnStopSignals(async signal => {
      killProcessGroups('SIGKILL')
      if (copies) {
        io.stderr(`dsh try: ${signal}: stopped; removing ${copies}\n`)
        rmSync(copies, { recursive: true, force: true, maxRetries: 5 })
      }
    })
    let report: TryReport
    try {
      // Loaded here, not at the top: the probes load TypeScript (~1 s of CPU), which every other dsh command would pay at start.
      const { runTry } = await import('../try/run.ts')
      report = await runTry({
        workspace, module: str(args, 'module'), fn: str(args, 'function'), config: str(args, 'config'), naive: !bool(args, 'no-naive'),
        naiveTimeoutMs, probeTimeoutMs, restart: bool(args, 'restart'), keep: bool(args, 'keep'), progress, onCopies: dir => { copies = dir },
      })
    } catch (error) {
      if (error instanceof ConfigError) {
        io.stderr(`dsh try: ${error.message}\n`)
        return 2
      }
      throw error
    } finally {
      release()
    }
    if (!report.language) {
      io.stderr(`dsh try: ${workspace} is not a TypeScript, Go or Python project (no tsconfig.json, package.json, go.mod, pyproject.toml or .py files)\n`)
      return 2
    }
    if (bool(args, 'json')) io.stdout(JSON.stringify(report, null, 2) + '\n')
    else io.stdout(formatReport(report))
    const wrong = report.probes.some(p => p.verdict !== undefined && p.verdict !== p.probe.expect)
    return wrong || report.touched.length ? 1 : 0
  },
}

const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const cpu = (ms: number | undefined) => (ms === undefined ? '' : ` (CPU ${sec(ms)})`)
const mb = (kb: number | undefined) => (kb === undefined ? 'not measured' : `${Math.round(kb / 1024)} MB`)

const title = (p: ProbeOutcome) => `${p.restarted ? 'after a restart: ' : ''}${p.probe.title}`

/** The report as text: the project, the naive check, one table row per probe, memory, and whether DIR was left alone. */
function formatReport(r: TryReport): string {
  const lines: string[] = []
  const m = r.module
  lines.push(`dsh try: ${r.workspace} (${r.language})`)
  lines.push(m ? `${r.moduleAsked ? 'module asked for' : 'most-imported module'}: ${m.file} (${m.importers.length} importers, ${m.tests.length} of them test files)` : 'most-imported module: none (no source module is imported by another file)')
  const naive = r.naive
  if (naive) {
    const steps = naive.steps.map(s => `${s.label} ${sec(s.ms)}${cpu(s.cpuMs)}${s.timedOut ? ' (timed out)' : s.exitCode === 0 ? '' : ` (exit ${s.exitCode})`}`).join(', ')
    lines.push(`naive check: ${sec(naive.ms)}${cpu(naive.cpuMs)} — ${steps || 'no step could run'}; peak RSS ${mb(naive.peakRssKb)}`)
  } else {
    lines.push('naive check: skipped (--no-naive)')
  }
  lines.push('')
  lines.push('| probe | expected | verdict | guard | naive | guard / naive | load | what the guard ran |')
  lines.push('|---|---|---|---|---|---|---|---|')
  for (const p of r.probes) {
    if (!p.verdict) {
      lines.push(`| ${title(p)} | ${p.probe.expect} | not made: ${p.probe.missing} | — | — | — | — | — |`)
      continue
    }
    const mark = p.verdict === p.probe.expect ? '' : ' ✗'
    const verdict = `${p.verdict}${mark}${p.problem ? `: ${p.problem.split('\n')[0]!.slice(0, 120)}` : ''}${p.undone ? ' (undone on the copy)' : ''}`
    const cpuRatio = naive?.cpuMs && p.cpuMs !== undefined ? ` (CPU ${(p.cpuMs / naive.cpuMs).toFixed(2)}×)` : ''
    const ratio = naive && naive.ms > 0 ? `${(p.ms! / naive.ms).toFixed(2)}×${cpuRatio}` : '—'
    const ran = [...p.runs.map(x => `${x.check}${x.how && x.how !== 'incremental' ? ` (${x.how})` : ''} ${sec(x.ms)}${x.outcome === 'pass' ? '' : ` ${x.outcome}`}`), ...(p.selection ? [p.selection.replaceAll('|', '\\|')] : [])].join(' · ') || 'nothing'
    lines.push(`| ${title(p)} | ${p.probe.expect} | ${verdict} | ${sec(p.ms!)}${cpu(p.cpuMs)} | ${naive ? `${sec(naive.ms)}${cpu(naive.cpuMs)}` : '—'} | ${ratio} | ${p.load === undefined ? '—' : p.load.toFixed(1)} | ${ran} |`)
  }
  lines.push('')
  lines.push(`peak RSS of the guard (with its workers and runners): ${mb(r.guardPeakRssKb)}`)
  lines.push(r.touched.length ? `WORKSPACE CHANGED during the run: ${r.touched.slice(0, 10).join(', ')}` : `${r.workspace}: untouched (every file's size and mtime as before)`)
  if (r.copies.length) lines.push(`copies kept: ${r.copies.join(', ')}`)
  return lines.join('\n') + '\n'
}
