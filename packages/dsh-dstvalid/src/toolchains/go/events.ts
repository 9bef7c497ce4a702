/**
 * Reading what `go test -json` reports, across Go versions:
 *
 * - Go ≤ 1.21 (1.19 is what Debian and CI ship): a package whose test binary
 *   does not build prints one NON-JSON line on stdout, `FAIL\t<pkg> [build failed]`,
 *   and the compiler errors on stderr under `# <pkg> [<pkg>.test]` headers.
 * - Go 1.22–1.23: the `FAIL … [build failed]` line arrives as an `output`
 *   event of the package, followed by a `fail` event; errors still on stderr.
 * - Go ≥ 1.24: build output is JSON too — `{"ImportPath":"<pkg> [<pkg>.test]","Action":"build-output","Output":…}`
 *   events, a `build-fail` event, and the package's `fail` event names the
 *   failed build in `FailedBuild`; nothing on stderr.
 *
 * All three end in the same picture: each package that failed to build its
 * tests, with the compiler errors attributed to it.
 */
import { FILE_LEVEL } from '../../accepted.ts'
import { failingTest } from '../../problems.ts'
import type { Measurement, Problem } from '../../types.ts'

/** One compiler error of a test build, position workspace-relative (as `go` prints it from the module root). */
export interface GoBuildError {
  file: string
  line: number
  /** `file:line: message` (no column, no leading `./`). */
  text: string
}

/** What one `go test -json` run found. */
export interface GoTestRun {
  measurement: Measurement
  /** Import paths whose test binary did not build, with the errors attributed to each (possibly none). */
  buildFailed: Map<string, GoBuildError[]>
}

interface GoTestEvent {
  Action: string
  Package?: string
  Test?: string
  Output?: string
  /** Go ≥ 1.24, build events: `<pkg>` or `<pkg> [<pkg>.test]`. */
  ImportPath?: string
  /** Go ≥ 1.24, a package `fail`: the build (an ImportPath) whose failure it was. */
  FailedBuild?: string
  /** Seconds, on a test's `pass` / `fail`. */
  Elapsed?: number
}

/** The panic of a test binary that ran past `go test -timeout`, printed inside the running test's output. */
const TIMED_OUT = /^panic: test timed out after (\S+)/

/** The `-timeout` a test's output says its binary ran past; undefined when it does not. */
function timeoutIn(lines: readonly string[] | undefined): { limitMs: number; text: string } | undefined {
  for (const line of lines ?? []) {
    const text = TIMED_OUT.exec(line.trim())?.[1]
    const limitMs = text === undefined ? undefined : goDurationMs(text)
    if (text !== undefined && limitMs !== undefined) return { limitMs, text }
  }
  return undefined
}

/** Milliseconds of a Go duration (`300ms`, `5s`, `1m30s`, `1.5s`); undefined when it is not one. */
function goDurationMs(text: string): number | undefined {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, 'µs': 0.001, ns: 0.000_001 }
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)]
  if (!parts.length || parts.map(p => p[0]).join('') !== text) return undefined
  return Math.round(parts.reduce((ms, [, n, unit]) => ms + Number(n) * units[unit!]!, 0))
}

const ERROR_LINE = /^(?:vet: )?(?:\.\/)?([^\s:][^:]*\.go):(\d+)(?::\d+)?: (.+)$/
const BUILD_FAILED = /^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]/
/** Lines of a failing test's output that are not the harness's own markers. */
const TEST_MARKER = /^(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:FAIL|PASS|SKIP):|FAIL$|PASS$)/
/** Room for a failing test's own lines (expected/got) in its one-line message. */
const TEST_OUTPUT_CHARS = 700

/**
 * The package a build header or `ImportPath` is about: `m/calc [m/calc.test]`
 * and `m/calc_test [m/calc.test]` are the test build of `m/calc`; `m/x` alone
 * is `m/x` itself (a non-test package, e.g. a dependency).
 */
export function buildPackage(header: string): string {
  const test = /\[(\S+)\.test\]\s*$/.exec(header)
  if (test) return test[1]!
  return header.trim().split(/\s+/)[0]!
}

/** Compiler errors by package from Go's text build output (`# <pkg>` headers, then `file:line:col: msg` lines). */
function parseGoBuildOutput(text: string, into = new Map<string, GoBuildError[]>()): Map<string, GoBuildError[]> {
  let current = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line.startsWith('# ')) {
      current = buildPackage(line.slice(2))
      continue
    }
    const m = ERROR_LINE.exec(line)
    if (!m) continue
    const list = into.get(current) ?? []
    list.push({ file: m[1]!, line: Number(m[2]), text: `${m[1]}:${m[2]}: ${m[3]}` })
    into.set(current, list)
  }
  return into
}

/** `calc/x_test.go:6: undefined: Mul; calc/y_test.go:3: …` — the first few errors, one line. */
export function describeBuildErrors(errors: readonly GoBuildError[], max = 3): string {
  const shown = errors.slice(0, max).map(e => e.text)
  return `${shown.join('; ')}${errors.length > max ? `; … ${errors.length - max} more` : ''}`
}

/** The lines a failing test printed (expected/got), joined, without the harness's markers. */
function testOutput(lines: readonly string[]): string {
  const text = lines.map(l => l.trim()).filter(l => l && !TEST_MARKER.test(l)).join(' | ')
  return text.length > TEST_OUTPUT_CHARS ? `${text.slice(0, TEST_OUTPUT_CHARS - 1)}…` : text
}

/**
 * Read a `go test -json` run: failing tests (with what they printed),
 * passing ids, and packages whose tests did not build. `labelOf` names a
 * package for problems and scope (its workspace directory, or the import
 * path for the module root).
 */
export function readGoTestRun(check: string, stdout: string, stderr: string, labelOf: (pkg: string) => string): GoTestRun {
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const skipped: { key: string; file: string }[] = []
  const scope = new Set<string>()
  const output = new Map<string, string[]>()
  const failedTests = new Set<string>()
  const failedPackages = new Set<string>()
  const buildFailed = new Set<string>()
  /** Package → the build its failure names (Go ≥ 1.24 `FailedBuild`). */
  const failedBuildOf = new Map<string, string>()
  const buildText = new Map<string, string[]>()
  /** Tests started and not ended: a binary killed by `-timeout` ends none of them (Go < 1.20 reports no `fail` for the test). */
  const running = new Map<string, string>()
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) {
      // Go ≤ 1.21 prints a test build failure as plain text between the JSON events.
      const m = BUILD_FAILED.exec(line.trim())
      if (m) buildFailed.add(m[1]!)
      continue
    }
    let e: GoTestEvent
    try {
      e = JSON.parse(line) as GoTestEvent
    } catch {
      // A partial line at the output cap: the rest of the report still counts.
      continue
    }
    if (e.ImportPath && !e.Package) {
      if (e.Action === 'build-output' && e.Output) buildText.set(e.ImportPath, [...(buildText.get(e.ImportPath) ?? []), e.Output])
      continue
    }
    if (!e.Package) continue
    const label = labelOf(e.Package)
    scope.add(label)
    const id = e.Test ? `${label}::${e.Test}` : `${label}${FILE_LEVEL}`
    if (e.Action === 'output' && e.Output) {
      output.set(id, [...(output.get(id) ?? []), e.Output])
      if (!e.Test && BUILD_FAILED.test(e.Output.trim())) buildFailed.add(e.Package)
    }
    if (e.Action === 'run' && e.Test) running.set(id, e.Test)
    if ((e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') && e.Test) running.delete(id)
    if (e.Action === 'pass' && e.Test) passed.push({ key: id, file: label,
      ...(typeof e.Elapsed === 'number' ? { durationMs: Math.round(e.Elapsed * 1000) } : {}) })
    if (e.Action === 'skip' && e.Test) skipped.push({ key: id, file: label })
    if (e.Action === 'fail') {
      if (e.FailedBuild) {
        buildFailed.add(e.Package)
        failedBuildOf.set(e.Package, e.FailedBuild)
      }
      if (e.Test) {
        failedTests.add(label)
        const why = testOutput(output.get(id) ?? [])
        const timeout = timeoutIn(output.get(id))
        problems.push({ ...failingTest(check, id, label, undefined, `${e.Test}${why ? ` — ${why}` : ''}`),
          ...(timeout ? { timeout: { limitMs: timeout.limitMs } } : {}) })
      } else failedPackages.add(e.Package)
    }
  }
  // The test the `-timeout` panic interrupted: a failure of its own, keyed by the test, with its limit.
  for (const [id, test] of running) {
    const timeout = timeoutIn(output.get(id))
    if (!timeout) continue
    const label = id.slice(0, id.indexOf('::'))
    failedTests.add(label)
    problems.push({ ...failingTest(check, id, label, undefined, `${test} — panic: test timed out after ${timeout.text}`),
      timeout: { limitMs: timeout.limitMs } })
  }
  const errors = parseGoBuildOutput(stderr)
  for (const [importPath, chunks] of buildText) parseGoBuildOutput(`# ${importPath}\n${chunks.join('')}`, errors)
  const attributed = new Map<string, GoBuildError[]>()
  for (const pkg of buildFailed) {
    const own = errors.get(pkg) ?? errors.get(buildPackage(failedBuildOf.get(pkg) ?? '')) ?? []
    // A dependency that does not build: its errors are the reason.
    attributed.set(pkg, own.length ? own : [...errors.values()].flat())
  }
  for (const pkg of new Set([...failedPackages, ...buildFailed])) {
    const label = labelOf(pkg)
    scope.add(label)
    if (failedTests.has(label)) continue
    const id = `${label}${FILE_LEVEL}`
    const build = attributed.get(pkg)
    const why = build
      ? `tests do not build: ${build.length ? describeBuildErrors(build) : 'see go test output'}`
      : `package failed: ${(output.get(id) ?? []).map(l => l.trim()).find(l => ERROR_LINE.test(l)) ?? (testOutput(output.get(id) ?? []) || 'a test binary crashed')}`
    problems.push(failingTest(check, id, label, undefined, why))
  }
  return { measurement: { status: 'ok', problems, passed, skipped, scope: [...scope] }, buildFailed: attributed }
}

/** Parse `go test -json` output (and its stderr); `labelOf` maps an import path to the package's name in problems. */
export function parseGoTestJson(check: string, stdout: string, labelOf: (pkg: string) => string, stderr = ''): Measurement {
  return readGoTestRun(check, stdout, stderr, labelOf).measurement
}
