/*
 * Runner mechanics shared by several toolchains: the JSON test report shape,
 * the first line of a failure, the write's own parse errors named in a
 * runner's output, the flaky re-run, the compiler diagnostic shape. A
 * toolchain borrows these from here, never from another toolchain.
 */
import { join } from 'node:path'
import { FILE_LEVEL, stableTestKey } from '../accepted.ts'
import { diagnostic, longerLimit } from '../problems.ts'
import type { Confirmation, Measurement, Problem, SlowTest } from '../types.ts'

/** `text` as a literal inside a regular expression. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** One re-run: a test file (and, for vitest projects, its project), with the `-t` pattern naming its failing tests. */
export interface Rerun {
  file: string
  /** What the group shares beyond the file (the vitest project; '' when none). */
  group: string
  /** `^(name|name)$`; undefined when the whole file failed, or no test names are known. */
  pattern?: string
  /** The longer test time limit to run with (ms), when a test of the group timed out (the runner's own flag: `--testTimeout`, `-timeout`). */
  testTimeoutMs?: number
  /** Likewise for hooks (`--hookTimeout`), when a hook timed out. */
  hookTimeoutMs?: number
}

/**
 * The runner's time limit named in a failure's first line: vitest `Test
 * timed out in 5000ms` / `Hook timed out in 10000ms`, Jest `Exceeded
 * timeout of 5000 ms for a test` / `for a hook`. Undefined for any other failure.
 */
export function timeoutOf(text: string | undefined): Problem['timeout'] {
  const vitest = /\b(Test|Hook) timed out in (\d+)\s?ms\b/.exec(text ?? '')
  if (vitest) return { limitMs: Number(vitest[2]), ...(vitest[1] === 'Hook' ? { hook: true } : {}) }
  const jest = /\bExceeded timeout of (\d+)\s?ms for a (test|hook)\b/.exec(text ?? '')
  if (jest) return { limitMs: Number(jest[1]), ...(jest[2] === 'hook' ? { hook: true } : {}) }
  return undefined
}

/**
 * Flaky-test confirmation shared by the test runners: newly failing tests
 * are re-run alone, one run per file (and group), and the ones that still
 * fail are returned. A group with a test that failed by timing out is re-run
 * with a limit {@link TIMEOUT_FACTOR} times its own; such a test that then
 * passes, but took longer than its own limit, is returned as slow (one that
 * passes within its own limit is flaky, like any other). A re-run that could
 * not be judged confirms nothing: undefined, and the caller keeps every failure.
 *
 * One failure that repeats decides the verdict (the write is rolled back
 * whatever the others would do), so the re-runs stop at the first file with
 * one: the files not re-run are returned as `notRerun` (still failing after
 * the write, not confirmed). Files whose failures are all timeouts go last
 * (their re-runs take {@link TIMEOUT_FACTOR}× their limit).
 */
export async function confirmAlone(
  problems: readonly Problem[],
  nameOf: (p: Problem) => string | undefined,
  run: (rerun: Rerun) => Promise<Measurement | undefined>,
  groupOf: (p: Problem) => string = () => '',
): Promise<Confirmation | undefined> {
  const groups = new Map<string, Problem[]>()
  for (const p of problems) {
    const id = `${groupOf(p)}\u0000${p.file}`
    groups.set(id, [...(groups.get(id) ?? []), p])
  }
  const still: Problem[] = []
  const slow: SlowTest[] = []
  const order = [...groups].sort(([, a], [, b]) => Number(a.every(p => p.timeout)) - Number(b.every(p => p.timeout)))
  for (const [at, [id, group]] of order.entries()) {
    if (still.length) return { still, ...(slow.length ? { slow } : {}), notRerun: order.slice(at).flatMap(([, g]) => g) }
    const [name, file] = id.split('\u0000') as [string, string]
    const whole = group.some(p => p.key.endsWith(FILE_LEVEL))
    const names = group.map(nameOf).filter((n): n is string => !!n)
    // A long number in a name may be drawn at run time (a property test's seed): any long number matches there.
    const pattern = whole || !names.length ? undefined : `^(${names.map(n => escapeRegExp(n).replace(/-?\d{4,}/g, '-?\\d+')).join('|')})$`
    const limit = (hook: boolean) => Math.max(0, ...group.filter(p => p.timeout && !!p.timeout.hook === hook).map(p => p.timeout!.limitMs))
    const testLimit = limit(false)
    const hookLimit = limit(true)
    const m = await run({
      file, group: name, ...(pattern ? { pattern } : {}),
      ...(testLimit ? { testTimeoutMs: longerLimit(testLimit) } : {}), ...(hookLimit ? { hookTimeoutMs: longerLimit(hookLimit) } : {}),
    })
    if (!m || m.status !== 'ok') return undefined
    const judged = rerunResult(group, m)
    still.push(...judged.still)
    slow.push(...judged.slow ?? [])
  }
  return { still, ...(slow.length ? { slow } : {}) }
}

/**
 * What a re-run alone says of `group`: the problems that failed again, and
 * the timed-out tests that passed but took longer than their own limit
 * (one that passed within it did not repeat: flaky, like any other).
 */
export function rerunResult(group: readonly Problem[], m: Measurement): Confirmation {
  const failing = new Set(m.problems.map(p => p.key))
  const took = new Map((m.passed ?? []).map(p => [p.key, p.durationMs]))
  // A test whose name carries a number chosen at run time (a seed) comes back under another id: its twin stands for it.
  const own = new Set(group.map(p => p.key))
  const spare = [...failing, ...took.keys()].filter(k => !own.has(k))
  const rerunOf = (key: string) => {
    if (failing.has(key) || took.has(key)) return key
    const at = spare.findIndex(k => stableTestKey(k) === stableTestKey(key))
    return at < 0 ? key : spare.splice(at, 1)[0]!
  }
  const still: Problem[] = []
  const slow: SlowTest[] = []
  for (const p of group) {
    const key = rerunOf(p.key)
    if (failing.has(key)) still.push(p)
    else if (p.timeout && took.has(key)) {
      const durationMs = p.timeout.hook ? undefined : took.get(key)
      if (durationMs === undefined || durationMs >= p.timeout.limitMs) {
        slow.push({ problem: p, limitMs: p.timeout.limitMs, rerunLimitMs: longerLimit(p.timeout.limitMs), ...(durationMs === undefined ? {} : { durationMs }) })
      }
    }
  }
  return { still, ...(slow.length ? { slow } : {}) }
}

/** The JSON test report of Jest's `--json` and vitest's `--reporter=json` (vitest copied Jest's shape): the parts the judges read. */
export interface JsonTestReport {
  testResults: {
    name: string
    status: string
    message?: string
    assertionResults: {
      ancestorTitles: string[]
      title: string
      fullName: string
      status: string
      failureMessages?: string[]
      location?: { line: number; column: number } | null
      /** Milliseconds (Jest). */
      duration?: number | null
    }[]
  }[]
}

/** The first non-empty line of a runner's text, trimmed ('' when none). */
export function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n').map(l => l.trim()).find(Boolean) ?? ''
}

/** Markers of a parse/transform failure in vitest's output (esbuild, oxc/rolldown, Vite, Node). */
const PARSE_FAILURE = /Transform failed|PARSE_ERROR|Parse failure|Failed to parse|SyntaxError|Unexpected token|Expected .{1,80} but found|Unterminated|Unexpected end of/i

/**
 * Parse failures of files the write touched, named in vitest's errors: the
 * write's own breakage, reported even when no test result could be (vitest
 * `related` cannot even build its graph). One diagnostic per touched file.
 */
export function ownParseErrors(check: string, root: string, touched: readonly string[], texts: readonly string[]): Problem[] {
  const problems: Problem[] = []
  for (const file of touched) {
    const abs = join(root, file)
    for (const raw of texts) {
      const text = raw.replace(/\x1b\[[0-9;]*m/g, '')
      if (!PARSE_FAILURE.test(text)) continue
      const lines = text.split('\n')
      // The touched file as the failure's location (`path:3:0: ERROR …`, `╭─[ path:3:1 ]`,
      // `SyntaxError: path: …`), not merely mentioned (a stack frame, the test file that imports it).
      const at = lines.findIndex(l => {
        const named = l.includes(abs) ? abs : l.includes(file) ? file : undefined
        if (!named) return false
        return PARSE_FAILURE.test(l) || /^\s*(?:╭─\[\s*)?$/.test(l.slice(0, l.indexOf(named)))
      })
      if (at < 0) continue
      const where = lines[at]!
      const named = where.includes(abs) ? abs : file
      const [pre = '', post = ''] = where.split(named, 2)
      // `path:3:0`, or Babel's `path: message (3:0)`.
      const line = /^:(\d+)/.exec(post)?.[1] ?? /\((\d+):\d+\)\s*$/.exec(post)?.[1]
      // The message without the path and position, so the same error keys the same wherever it moves.
      const kind = /(\w*Error):?\s*$/.exec(pre.trim())?.[1]
      const detail = `${kind ? `${kind}: ` : ''}${post.replace(/^[\s:\d]*/, '').replace(/\s*\(\d+:\d+\)\s*$/, '')}`.trim()
      // Else the nearest line above that says what failed (oxc: `[PARSE_ERROR] Expected … but found …` above `╭─[ path:3:1 ]`).
      const above = lines.slice(0, at).reverse().map(l => l.trim()).find(l => PARSE_FAILURE.test(l) && !/^(Error: )?Transform failed/.test(l))
      const message = detail && PARSE_FAILURE.test(detail) ? detail : above ?? (firstLine(text) || 'parse error')
      problems.push({ ...diagnostic(check, file, line === undefined ? undefined : Number(line), 'PARSE_ERROR', message), own: true })
      break
    }
  }
  return problems
}

/** One diagnostic of a TypeScript compiler (either generation), workspace-relative. */
export interface TsDiagnostic {
  /** Workspace-relative, forward slashes; for a global or options diagnostic `''` (one project) or its project's tsconfig (several). */
  file: string
  line?: number
  code: number
  category: 'error' | 'warning'
  message: string
}
