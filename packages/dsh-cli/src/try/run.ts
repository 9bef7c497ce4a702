import type { Context } from '@deepseek-ai/cordis'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, posix, sep } from 'node:path'
import { processTreeCpuMs, processTreeRssKb } from 'dsh-common'
import type { SessionEvent } from 'dsh-session'
import type { Agent } from 'dsh-agent'
import type { DstvalidNotice } from 'dsh-dstvalid'
import { UsageError } from '../command.ts'
import { bootHarness } from '../harness.ts'
import { naiveSteps, runNaive, type NaiveResult } from './naive.ts'
import { deriveProbes, functionNames, type Probe } from './probes.ts'
import { detectLanguage, listFiles, rankModules, type Language, type ModuleInfo } from './sources.ts'
import { copyWorkspace, fingerprint, fingerprintChanges } from './workspace-copy.ts'

export interface TryOptions {
  workspace: string
  /** cordis.yml to boot the guard from (default: the suite's own). */
  config?: string
  /** Skip the naive check (its column then says so). */
  naive: boolean
  /** Milliseconds a naive step may take. */
  naiveTimeoutMs: number
  /** Keep the throw-away copies (their paths are printed). */
  keep: boolean
  /** Milliseconds one probe may take before it is reported timed out (its call is then aborted); none: no limit. */
  probeTimeoutMs?: number
  /**
   * After the probes, stop the guard and start it again on the same copy (a
   * restarted dsh: the build-info cache and the test map it left in the
   * copy's vault) and make the probes again.
   */
  restart?: boolean
  /** The workspace-relative module to probe instead of the most-imported one. */
  module?: string
  /** The function of the module the comment, body-only and behaviour probes are made on. */
  fn?: string
  /** Told the directory of the copies as soon as it exists (a signal handler removes it). */
  onCopies?(dir: string): void
  progress(line: string): void
}

/** One probe's outcome. */
export interface ProbeOutcome {
  probe: Probe
  /** `kept`, `rolled back`, or `kept, not verified` (a check could not judge). */
  verdict?: string
  /** Which checks said what, e.g. `typecheck rolled-back`. */
  checks: string[]
  /** The first new problem, as the model saw it. */
  problem?: string
  ms?: number
  /** CPU time the guard (this process, its workers and the runners it started) spent on the probe, in ms; undefined without `/proc`. */
  cpuMs?: number
  /** The 1-minute load average when the probe ended (the machine may be shared: wall times compare only at a like load). */
  load?: number
  /**
   * The commands (or in-process checks) the guard ran for it, with their times;
   * `how`: the type-check's mode (`from build info`, `cold`, …) when it said one.
   */
  runs: { check: string; ms: number; outcome: string; how?: string }[]
  /** Which test files the test check ran and why, as it said (e.g. `tests: 13 of 94 related test files: those that ran \`raw\``). */
  selection?: string
  /** The probe was expected rolled back but was kept: it was undone outside the guard. */
  undone?: boolean
  /** The probe outlived `--timeout`: `ms` is the limit, the verdict says so. */
  timedOut?: boolean
  /** Made by the restarted guard (`--restart`): the second session on the copy. */
  restarted?: boolean
}

export interface TryReport {
  workspace: string
  language?: Language
  module?: ModuleInfo
  /** `module` was asked for (`--module`, `--function`), not the most-imported one. */
  moduleAsked?: boolean
  naive?: NaiveResult
  probes: ProbeOutcome[]
  /** Peak resident memory of the guard (this process, its workers and the runners it started), in kB. */
  guardPeakRssKb?: number
  /** Paths of the workspace that changed during the run (must be none). */
  touched: string[]
  copies: string[]
}

/**
 * `dsh try`: on throw-away copies of the workspace, run the naive full
 * check once, then make each probe through the guard (a session of the
 * configured harness, no model: the tool calls are made directly), timing
 * each verdict. The workspace itself is only read; that it was left as it
 * was is checked at the end.
 */
export async function runTry(options: TryOptions): Promise<TryReport> {
  const { workspace, progress } = options
  const before = fingerprint(workspace)
  const files = listFiles(workspace)
  const language = detectLanguage(files)
  const report: TryReport = { workspace, language, probes: [], touched: [], copies: [] }
  if (!language) {
    report.touched = fingerprintChanges(before, fingerprint(workspace))
    return report
  }
  const modules = rankModules(workspace, language, files)
  const readOriginal = (file: string) => readFileSync(join(workspace, file), 'utf8')
  report.module = chooseModule(workspace, language, modules, files, readOriginal, options)
  const choice = { fn: options.fn, asked: options.module !== undefined || options.fn !== undefined }
  if (choice.asked) report.moduleAsked = true
  // The probes as they would be made on the project itself, to list; each is derived again from the copy as it is when its turn comes.
  const probes = deriveProbes(language, report.module, readOriginal, choice)

  const base = mkdtempSync(join(tmpdir(), 'dsh-try-'))
  options.onCopies?.(base)
  if (options.keep) report.copies.push(base)
  try {
    if (options.naive) {
      const naiveDir = join(base, 'naive')
      progress(`copying ${workspace} for the naive check…`)
      copyWorkspace(workspace, naiveDir)
      const steps = naiveSteps(naiveDir, language)
      report.naive = await runNaive(naiveDir, steps, options.naiveTimeoutMs, step => progress(`naive check: ${step.label}…`))
    }
    const guardDir = join(base, 'guarded')
    progress(`copying ${workspace} for the guard…`)
    copyWorkspace(workspace, guardDir)
    const current = (now: Probe) => deriveProbes(language, report.module, file => readFileSync(join(guardDir, file), 'utf8'), choice).find(p => p.id === now.id)!
    await runProbes(guardDir, probes, current, options, report, false)
    if (options.restart) {
      progress('restarting the guard on the same copy (its vault kept)…')
      await runProbes(guardDir, probes, current, options, report, true)
    }
  } finally {
    if (!options.keep) rmSync(base, { recursive: true, force: true })
    report.touched = fingerprintChanges(before, fingerprint(workspace))
  }
  return report
}

/**
 * The module the probes are made in: the one asked for (`options.module`),
 * else the most-imported one in which they can be made (one with a
 * function), else the most-imported one. `options.fn` must name a function
 * with a body in it.
 */
function chooseModule(workspace: string, language: Language, modules: readonly ModuleInfo[], files: readonly string[], read: (file: string) => string, options: TryOptions): ModuleInfo | undefined {
  let module: ModuleInfo | undefined
  if (options.module !== undefined) {
    const file = posix.normalize(options.module.split(sep).join('/')).replace(/^\.\//, '')
    module = modules.find(m => m.file === file)
    if (!module) {
      throw new UsageError(files.includes(file)
        ? `dsh try: --module ${options.module}: no other file of ${workspace} imports it, so its importers and tests cannot be probed`
        : `dsh try: --module ${options.module}: not a source file of ${workspace} (give its path relative to the workspace)`)
    }
  } else if (options.fn === undefined) {
    module = modules.slice(0, 20).find(m => deriveProbes(language, m, read).every(p => p.call || !p.missing?.startsWith('no function'))) ?? modules[0]
  } else {
    module = modules.find(m => functionNames(language, m.file, read(m.file)).includes(options.fn!))
    if (!module) throw new UsageError(`dsh try: --function ${options.fn}: no source module of ${workspace} that another file imports has a function of that name with a body`)
  }
  if (module && options.fn !== undefined) {
    const names = functionNames(language, module.file, read(module.file))
    if (!names.includes(options.fn)) throw new UsageError(`dsh try: --function ${options.fn}: no function of that name with a body in ${module.file}${names.length ? ` (it has: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''})` : ''}`)
  }
  return module
}

async function runProbes(dir: string, planned: readonly Probe[], current: (probe: Probe) => Probe, options: TryOptions, report: TryReport, restarted: boolean) {
  const { progress } = options
  let peak = report.guardPeakRssKb ?? 0
  const which = restarted ? ' (restarted guard)' : ''
  const sample = () => {
    const kb = processTreeRssKb(process.pid)
    if (kb !== undefined) peak = Math.max(peak, kb)
  }
  const timer = setInterval(sample, 250)
  progress('starting the guard…')
  const harness = await bootHarness({ workspace: dir, config: options.config, patches: [{ id: 'model', disabled: true }] })
  try {
    // The test check's word on which test files it ran, during the probe being made.
    let selection: string | undefined
    const notices = harness.ctx.plugin((ctx: Context) => {
      ctx.on('dstvalid/notice', (n: DstvalidNotice) => {
        if (n.phase !== 'end') progress(`  ${n.text}`)
        if (n.text.startsWith('tests: ')) selection = n.text
      })
    })
    await notices
    const { session } = harness.createSession(restarted ? 'dsh-try-restarted' : 'dsh-try')
    let n = 0
    for (const plan of planned) {
      n++
      // Derived from the copy as the earlier probes left it (a kept edit moved the text).
      const probe = plan.call ? current(plan) : plan
      if (!probe.call) {
        report.probes.push({ probe, checks: [], runs: [], ...(restarted ? { restarted } : {}) })
        continue
      }
      progress(`probe ${n}/${planned.length}${which}: ${probe.title}…`)
      const from = session.nextSeq
      selection = undefined
      const callId = `try-${probe.id}`
      const t = performance.now()
      const cpu = processTreeCpuMs(process.pid)
      const abort = new AbortController()
      const limit = options.probeTimeoutMs
      let timedOut = false
      const timer = limit === undefined ? undefined : setTimeout(() => {
        timedOut = true
        progress(`probe ${n}/${planned.length}: timed out after ${sec(limit)} — its call is aborted; waiting for the guard to settle before the next probe…`)
        abort.abort(new Error(`dsh try: probe timed out after ${sec(limit)}`))
      }, limit)
      let result: { content: string; isError?: boolean }
      try {
        result = await harness.ctx.tools.execute({ session, callId, name: probe.call.name, arguments: probe.call.arguments, signal: abort.signal })
      } catch (error) {
        // Only the abort of a timed-out call is this probe's outcome; anything else ends the run.
        if (!timedOut) throw error
        result = { content: (error as Error)?.message ?? String(error), isError: true }
      } finally {
        clearTimeout(timer)
      }
      const ms = timedOut ? limit! : performance.now() - t
      // Each probe is a turn the agent then ends: a write kept for now (turn verdicts, ADR 0037) is undone when the stop is refused no more.
      const agent = { session } as unknown as Agent
      for (let refused = 0; refused < 10 && await harness.ctx.serial('agent/stop', agent, n); refused++);
      const cpuAfter = processTreeCpuMs(process.pid)
      const events = session.events.slice(session.events.findIndex(e => e.seq >= from)) as SessionEvent[]
      const outcome = judgeOutcome(probe, result, events, ms, callId)
      if (cpu !== undefined && cpuAfter !== undefined) outcome.cpuMs = cpuAfter - cpu
      outcome.load = loadavg()[0]
      if (restarted) outcome.restarted = true
      if (selection) outcome.selection = selection
      const said = outcome.verdict
      if (timedOut) {
        outcome.timedOut = true
        outcome.verdict = `timed out after ${sec(limit!)} (the guard then said: ${said})`
      }
      if (probe.expect === 'rolled back' && said !== 'rolled back' && !result.isError) {
        undo(dir, probe)
        outcome.undone = true
      }
      report.probes.push(outcome)
    }
  } finally {
    clearInterval(timer)
    sample()
    await harness.dispose()
  }
  report.guardPeakRssKb = peak || undefined
}

function judgeOutcome(probe: Probe, result: { content: string; isError?: boolean }, events: readonly SessionEvent[], ms: number, callId: string): ProbeOutcome {
  const verdicts = events.flatMap(e => (e.type === 'verify/verdict' && e.data.callId === callId ? [e.data] : []))
  const runs = events.flatMap(e => {
    if (e.type !== 'verify/run') return []
    // The type-check says how it ran as its last word: `(in-process, from build info)`.
    const how = /^\(in-process, ([^;)]+)/.exec(e.data.argv.at(-1) ?? '')?.[1]
    return [{ check: e.data.check, ms: e.data.durationMs, outcome: e.data.outcome, ...(how ? { how } : {}) }]
  })
  const checks = verdicts.map(v => `${v.check} ${v.outcome}`)
  let verdict: string
  if (verdicts.some(v => v.outcome === 'rolled-back')) verdict = 'rolled back'
  else if (result.isError && !verdicts.length) verdict = `refused by the tool: ${result.content.split('\n')[0]}`
  else if (verdicts.some(v => v.outcome === 'error')) verdict = 'kept, not verified'
  else if (verdicts.some(v => v.outcome === 'fail')) verdict = 'kept, failing'
  else verdict = verdicts.length ? 'kept' : 'kept, not judged'
  // The problem that decided: the rolled-back check's first, else the first of any check that did not pass.
  const problem = verdicts.find(v => v.outcome === 'rolled-back')?.newProblems[0] ?? verdicts.flatMap(v => (v.outcome === 'pass' ? [] : v.newProblems))[0]
  return { probe, verdict, checks, ms, runs, ...(problem ? { problem } : {}) }
}

const sec = (ms: number) => `${Math.round(ms / 100) / 10} s`

/** Put back a breaking probe the guard kept, so the next probe starts from the project as it was. */
function undo(dir: string, probe: Probe) {
  const args = probe.call!.arguments
  const file = join(dir, args.path!)
  if (probe.call!.name === 'write_file') {
    rmSync(file, { force: true })
    return
  }
  const text = readFileSync(file, 'utf8')
  const at = text.indexOf(args.new_string!)
  if (at >= 0) writeFileSync(file, text.slice(0, at) + args.old_string! + text.slice(at + args.new_string!.length))
}
