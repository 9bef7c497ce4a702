/**
 * Types of the checking engine. No Cordis imports: the engine can guard any
 * agent that can tell it which files a write touched.
 */
import type { ImpactList, ImportEdge } from './impact.ts'

/** One thing a check found wrong: a diagnostic, or a failing test. */
export interface Problem {
  /** The check that found it (`typecheck`, `test`, `compile`, `vet`, …). */
  check: string
  kind: 'diagnostic' | 'test'
  /**
   * Identity used to compare states. Diagnostics: file + code + normalised
   * message (never line/column, so moving code is not a new problem). Tests:
   * the test id (`file > suite > name`, `pkg::TestX`).
   */
  key: string
  /** Workspace-relative, forward slashes. */
  file: string
  line?: number
  /** `TS2322`, `vet`, `FAIL`, `E0308`, `exit` … */
  code: string
  /** One line. */
  message: string
  /**
   * The write's own breakage, whatever the accepted state had: a file the
   * write touched no longer parses or transforms, so tests that load it
   * cannot run (a runner that reports no per-test results still says so).
   */
  own?: boolean
  /**
   * The failure is the runner's own time limit, not an assertion: the test
   * (or a hook of it) did not finish within `limitMs` (vitest "Test timed
   * out in 5000ms", Jest "Exceeded timeout of 5000 ms", a `go test -timeout`
   * panic). Such a failure is confirmed with a longer limit.
   */
  timeout?: { limitMs: number; hook?: boolean }
}

/** Outcome of running one check as a whole (not whether the write was good). */
export type RunStatus = 'ok' | 'timeout' | 'error'

/** What one run of a check measured. */
export interface Measurement {
  status: RunStatus
  /** Problems present in the measured scope. */
  problems: Problem[]
  /**
   * Ids that were measured and are fine (tests that passed). Only checks with
   * partial scopes need it: an id neither here nor in `problems` was not measured.
   */
  passed?: { key: string; file: string; durationMs?: number }[]
  /**
   * What the measurement covers: `'all'` replaces the accepted state; a list
   * of workspace-relative files (or packages, for tests: test files) replaces
   * only the accepted entries that belong to them.
   */
  scope: 'all' | string[]
  /** Why status is not ok (one line), for the tool result and notices. */
  error?: string
  /**
   * Numbers measured per workspace-relative file (line coverage in percent),
   * for checks that judge by how a number moved. Covers the same scope.
   */
  readings?: Record<string, number>
  /** Lines for the model about what this measurement could not cover (e.g. `not type-checked: <file> is in no tsconfig program`), appended to a kept write's result. */
  notes?: string[]
  /**
   * Test files (packages) in scope that declare tests this run did not
   * report as passed or failed (skipped, no longer collected, removed): a
   * test that passed in the accepted state and no longer runs is a
   * regression, so their accepted result is needed to judge the write even
   * when nothing in them fails.
   */
  suspect?: string[]
  /**
   * The run was of every test there is (a whole-suite run whose scope lists
   * the files it ran): a test that passed in the accepted state and is not
   * in it is no longer collected, whatever its file.
   */
  complete?: boolean
  /**
   * The scope is a part of the related test files chosen more narrowly (by
   * the functions they ran, or none for a comment-only write): it says
   * nothing of how many test files the change relates to.
   */
  selected?: boolean
  /** Tests the run reported as skipped (neither passed nor failed). */
  skipped?: { key: string; file: string }[]
  /**
   * The check stopped once what it had found made the write worse
   * ({@link CheckIO.regresses}): `problems` are those found until then, part
   * of the whole. Never an accepted state: kept anyway (nobody could roll it
   * back), the check's accepted state is measured again before the next write.
   */
  partial?: boolean
  /**
   * Judging a write: every file it changed is a script whose declaration
   * signature — what its importers can see of it — this check found
   * unchanged (a type-check). Absent: one changed, or it cannot tell.
   */
  declarationsKept?: DeclarationsKept
}

/** A write left every written file's declaration signature as it was (see {@link Measurement.declarationsKept}). */
export interface DeclarationsKept {
  /** Absolute paths of the tsconfigs whose programs own every written file and computed the signatures (their compiler options are what the fact holds for). */
  readonly programs: readonly string[]
}

/** Which files a write changed, as the engine sees them. */
export interface Change {
  /** Absolute paths inside the workspace. */
  paths: string[]
  /** Workspace-relative forms of `paths`. */
  files: string[]
  /**
   * What each path held just before the write, in the accepted state
   * (absolute path → bytes; `null`: it did not exist). Absent when not known
   * (a shell call, whose paths are known only after it ran; a file too large
   * to keep).
   */
  before?: ReadonlyMap<string, Buffer | null>
  /**
   * Set by the engine for the checks after a type-check that passed with no
   * new problem and found every written file's declaration signature
   * unchanged ({@link Measurement.declarationsKept}): a test whose outcome
   * depends only on types (vitest's typecheck mode) cannot change outcome.
   * Absent: not known (never set by callers).
   */
  declarationsKept?: DeclarationsKept
}

/** A record of one command a check ran (the `verify/run` session event). */
export interface RunRecord {
  check: string
  argv: string[]
  cwd: string
  exitCode: number | null
  durationMs: number
  /**
   * What the command found, never the verdict on the write: `pass` it found
   * nothing wrong (exit 0; pytest's 5, no tests, too), `fail` it found
   * problems (a compile that hit a syntax error, a vet run with findings —
   * even findings the verdict tolerates as test-first work), `timeout` killed,
   * `error` it could not run. The verdict is `verify/verdict`.
   */
  outcome: 'pass' | 'fail' | 'timeout' | 'error'
  /**
   * Why the run left nothing to judge (no report, killed, could not start):
   * the first line of its output that explains it (`CACError: Unknown
   * option …`, `FATAL ERROR: … JavaScript heap out of memory`), else how it
   * ended. Absent when the run was judged.
   */
  cause?: string
}

/** What a check may use while it runs. Everything it runs is reported through `record`. */
export interface CheckIO {
  /** Report one command (or in-process run) for the `verify/run` record. */
  record(run: RunRecord): void
  /** Progress for UIs. */
  notice(level: 'info' | 'warn' | 'error', text: string): void
  /** Milliseconds a single command may take before its process group is killed. */
  timeoutMs: number
  maxOutputBytes: number
  /** dsh's vault (`.dsh/`): mounted read-only for the commands a check starts (ADR 0015). */
  vault?: string
  /** Aborts the running command (the turn was aborted). */
  signal?: AbortSignal
  /**
   * Judging a write: whether `problems` — part of what this measurement will
   * report (every one of them in the whole too) — already make the write
   * worse than the accepted state, as the whole would. A check that can stop
   * part-way may stop there and answer a {@link Measurement.partial}
   * measurement. Absent: measure everything (a baseline, a re-check).
   */
  regresses?(problems: readonly Problem[]): boolean
}

/**
 * One step of the checks pipeline. A profile contributes checks; an advanced
 * mode (style, coverage) is one more check.
 */
/** What one piece of a warm-up measured (see {@link Check.warmPiece}). */
export interface WarmPiece {
  measurement: Measurement
  done: boolean
}

/** A thread's V8 heap as it last reported it: used and committed bytes. */
export interface ThreadHeap {
  thread: string
  usedBytes: number
  totalBytes: number
}

export interface Check {
  /** `typecheck`, `test`, `compile`, `vet`, `style`, `coverage` … — the `check` of `verify/run` and `verify/result`. */
  readonly name: string
  /** Human verb for notices: "type-checking", "testing". */
  readonly verb: string
  /**
   * Measure the state. `change` undefined: the whole workspace (a baseline).
   * Otherwise only what the change can affect.
   */
  measure(change: Change | undefined, io: CheckIO): Promise<Measurement>
  /**
   * Re-run problems alone (flaky-test confirmation); a failure that is only
   * the runner's time limit ({@link Problem.timeout}) is re-run with a
   * longer one. Returns the ones that still fail and the timed-out ones
   * that passed only beyond their own limit; undefined when the re-run could
   * not be judged (then every failure stands).
   */
  confirm?(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined>
  /**
   * The same re-runs alone as {@link confirm}, on the accepted content
   * (`change.before` served as {@link measureAccepted} serves it): a test
   * that times out alone there too is not the write's. Undefined
   * when it cannot be done for this change.
   */
  confirmAccepted?(problems: Problem[], change: Change, io: CheckIO): Promise<Confirmation | undefined>
  /**
   * Measure `files` (workspace-relative test files) on the accepted content:
   * `change.before` served in place of what the write put on disk, without
   * writing it anywhere another process could see it. A lazy check that can
   * do this is not measured before a write: after it, only the test files
   * that fail are measured this way. Undefined when it cannot be done for
   * this change (e.g. the write deleted a file the tests import).
   */
  measureAccepted?(files: string[], change: Change, io: CheckIO): Promise<Measurement | undefined>
  /**
   * One piece of a lazy check's warm-up (session start, `warmMap`): the
   * whole suite the first time, then what earlier pieces did not finish.
   * It ends early once `yieldTo` aborts (a write is waiting), keeping what
   * finished. `measurement`: the accepted results of the test files that
   * finished (its scope); `done`: nothing is left. Undefined: no pieces here
   * (the warm-up measures the check whole, in one go). `restart`: begin
   * with the whole suite again (the workspace changed unjudged since the
   * earlier pieces).
   */
  warmPiece?(io: CheckIO, yieldTo: AbortSignal, restart: boolean): Promise<WarmPiece | undefined>
  /**
   * Whether {@link measureAccepted} can serve `change`'s accepted content
   * after the write (ADR 0019): what this toolchain's runs read only through
   * its module graph. A write it cannot serve (a created file a listing would
   * see, a fixture read at run time) has its accepted state measured before
   * it. Undefined (or false) when the check cannot serve any.
   */
  servable?(change: Change): boolean
  /**
   * Whether {@link servable} holds for any change whose content before is
   * known: a shell call's paths (and their content before, from the
   * snapshot) are known only after it ran, so such a check is judged after
   * it first instead of measuring the whole suite before it. Absent: no.
   */
  servesAnyChange?(): boolean
  /** The heaps of threads it keeps in this process (a worker thread), as they last reported them; for status. */
  heaps?(): ThreadHeap[]
  /**
   * Its language's import graph read with deleted files put back: a write
   * that deletes or moves a module also selects the tests of what imported
   * it (`deleted.ts`). Undefined: the check's own selection alone.
   */
  readonly moduleGraph?: ModuleGraph
  /**
   * Where a test is declared, to tell a test the write removed or renamed
   * on purpose from one it hid: the workspace-relative files that may
   * declare it (present or deleted) and what its declaration looks like.
   * Absent: the test's own file and its name as a quoted title.
   */
  testSource?(test: { key: string; file: string }, change: Change): TestSource
  /**
   * Why a written change cannot change what this check reports (a type-check
   * and a write that changed only comments), or undefined: measure it. When
   * it answers, the check is not run for the write (it passes; its accepted
   * state stays as it was). Judging a write only.
   */
  unaffectedBy?(change: Change): Promise<string | undefined>
  /**
   * A rollback put every file of the judged write back byte for byte:
   * return to the state from before the write's measurement instead of
   * measuring again (a warm type-checker reinstates its earlier program
   * state). Must not throw.
   */
  restore?(io: CheckIO): Promise<void> | void
  /**
   * Whether an entry of this check's measured scope is something an import
   * graph relates tests through; one that is not (a fixture read at run
   * time) makes the guard forget which accepted results are current (ADR
   * 0014). Absent: JS/TS modules, JSON, Vue and Svelte files.
   */
  inImportGraph?(entry: string): boolean
  /** Release processes or workers. Must not throw. */
  dispose?(): Promise<void> | void
  /** Start workers in the background (session start), so the first judged write does not wait for them. Must not throw. */
  startWorkers?(): void
  /**
   * Advisory checks only warn: every new problem they find is a warning,
   * never a regression (the write is never rolled back for it).
   */
  readonly advisory?: boolean
  /**
   * A measurement of this check became (part of) the accepted state. A check
   * that judges numbers (coverage) keeps its accepted readings here.
   */
  advance?(m: Measurement): void
  /**
   * The accepted state is measured per write instead of once for the whole
   * workspace: before a write runs, `measure(upcoming)` on the accepted
   * content covers what the same call covers after the write (targeted
   * tests: the tests related to the paths), so no verdict waits for a
   * whole-suite baseline. Measured again only for paths not measured yet,
   * or after an unjudged change.
   */
  readonly lazyBaseline?: boolean
  /**
   * A lazy check's related test files for `change` (workspace-relative),
   * found without running them; undefined when this check cannot tell
   * cheaply. When every one already has a current accepted result, the
   * accepted state of `change` is not measured again.
   */
  relatedTestFiles?(change: Change, io: CheckIO): Promise<string[] | undefined>
}

/** What a flaky-test confirmation found (see {@link Check.confirm}). */
export interface Confirmation {
  /** Problems that failed again when re-run alone. */
  still: Problem[]
  /** Tests that timed out and passed alone given a longer limit, but took longer than their own. */
  slow?: SlowTest[]
  /** Failures not re-run because one in `still` already decided the verdict: they stand as failures. */
  notRerun?: Problem[]
}

/** A test that passed only when given more time than its own limit: kept, said to the model with the time it needed. */
export interface SlowTest {
  problem: Problem
  /** Its own limit (ms). */
  limitMs: number
  /** The limit it was re-run with (ms). */
  rerunLimitMs: number
  /** How long it took when it passed; undefined when the runner did not say (a hook's time). */
  durationMs?: number
}

/** Where a test is declared (see {@link Check.testSource}). */
export interface TestSource {
  files: string[]
  /** Matches the test's declaration in a file's text. */
  declaration: RegExp
}

/** A toolchain profile: detected from the workspace, contributes checks. */
export interface Profile {
  readonly name: string
  readonly checks: Check[]
  /** Where change impact comes from for this profile (only when the impact mode is on). */
  readonly impact?: ImpactSource[]
}

/** Who imports what a write is about to change, from a profile's own import graph (change impact). */
export interface ImpactSource {
  /**
   * Importers of the change's files, transitively, nearest first, at most
   * `max`; undefined when none of the files belongs to this source. Runs
   * before the write, inside the workspace's queue. Throws when the graph
   * could not be read (the caller reports it and moves on).
   */
  importers(change: Change, max: number, io: CheckIO): Promise<ImpactList | undefined>
}

/** How one check judged a change. */
export interface CheckVerdict {
  check: string
  /** `pass`: nothing new (or only tolerated warnings); `fail`: regressions; `error`: could not judge. */
  outcome: 'pass' | 'fail' | 'error'
  /** New problems the write is blamed for (roll back). */
  regressions: Problem[]
  /** New problems tolerated (test-first work), reported as warnings. */
  warnings: Problem[]
  /** Newly failing tests that passed when re-run alone (flaky; kept). */
  flaky: Problem[]
  /** Newly failing tests that timed out and passed alone only with a longer limit (kept, with a warning naming the time they needed). */
  slow?: SlowTest[]
  /** Newly failing tests that time out when re-run alone, with the longer limit, on the accepted content too (not the write's; kept, with a warning). */
  hangAlone?: SlowTest[]
  durationMs: number
  error?: string
  /** Newly failing tests with no accepted result to compare with (reported as not verified, never blamed). */
  unknown?: Problem[]
  /**
   * Tests that passed in the accepted state and no longer run because the
   * write removed or renamed them on purpose (their declaration is gone
   * from a file it touched): kept, said to the model as a warning.
   */
  removed?: Problem[]
  /** From an advisory check: its warnings are not about tests (see {@link Check.advisory}). */
  advisory?: boolean
  /** The measurement's {@link Measurement.notes}. */
  notes?: string[]
  /** The check stopped at the first new problems ({@link Measurement.partial}): there may be more. */
  partial?: boolean
}

/** How the pipeline judged a change. */
export interface Verdict {
  checks: CheckVerdict[]
  /** True when some check found a regression (the write should be rolled back). */
  regression: boolean
}

/** A language whose import graph can be read with deleted files put back. */
export interface ModuleGraph {
  /** Module files of this language. */
  readonly files: RegExp
  /** Workspace-relative edges between the workspace's files and `deleted` (absolute paths no longer on disk). */
  graph(root: string, deleted: readonly string[]): ImportEdge[]
}
