import { diagnostic, failingTest } from '../../problems.ts'
import { runRecorded, whyNotJudged } from '../../run.ts'
import type { Change, Check, CheckIO, Confirmation, Measurement, Problem } from '../../types.ts'

interface CargoMessage {
  reason: string
  message?: {
    level: string
    message: string
    code?: { code: string } | null
    spans: { file_name: string; line_start: number; is_primary: boolean }[]
  }
}

/**
 * Parse `cargo check --message-format=json` output: compiler errors with a
 * primary span. One error seen by several targets (lib and its tests) counts once.
 */
export function parseCargoMessages(check: string, stdout: string): Problem[] {
  const problems: Problem[] = []
  const seen = new Set<string>()
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    let m: CargoMessage
    try {
      m = JSON.parse(line) as CargoMessage
    } catch {
      // A line cut by the output cap.
      continue
    }
    if (m.reason !== 'compiler-message' || m.message?.level !== 'error') continue
    const span = m.message.spans.find(s => s.is_primary)
    if (!span) continue
    const p = diagnostic(check, span.file_name, span.line_start, m.message.code?.code ?? 'error', m.message.message)
    if (seen.has(`${p.key}\u0000${p.line}`)) continue
    seen.add(`${p.key}\u0000${p.line}`)
    problems.push(p)
  }
  return problems
}

/** `cargo check --all-targets` (incremental through cargo's own cache). */
export class CargoCheck implements Check {
  readonly name = 'compile'
  readonly verb = 'checking'

  constructor(private readonly root: string) {}

  async measure(_change: Change | undefined, io: CheckIO): Promise<Measurement> {
    const r = await runRecorded(this.name, ['cargo', 'check', '--all-targets', '--message-format=json', '--quiet'], this.root, io)
    if (r.outcome === 'timeout' || r.outcome === 'error') {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: 'all', error: whyNotJudged('cargo check', r, io.timeoutMs) }
    }
    const problems = parseCargoMessages(this.name, r.stdout)
    if (r.exitCode !== 0 && !problems.length) problems.push(diagnostic(this.name, '', undefined, 'exit',
      `cargo check exited ${r.exitCode}: ${r.stderr.trim().split('\n').slice(-1)[0] ?? ''}`))
    return { status: 'ok', problems, scope: 'all' }
  }
}

/**
 * Parse libtest's human output of `cargo test`: `test path::name ... ok|FAILED|ignored`.
 * Cargo names each test binary on stderr (`Running unittests src/lib.rs (…)`,
 * `Doc-tests shop`) and libtest opens each section on stdout (`running N tests`),
 * in the same order; the two streams are paired by position, never by how
 * they happened to interleave.
 */
export function parseCargoTest(check: string, stdout: string, stderr: string): Measurement {
  const problems: Problem[] = []
  const passed: { key: string; file: string }[] = []
  const targets: string[] = []
  for (const raw of stderr.split('\n')) {
    const line = raw.trim()
    const running = /^Running (?:unittests )?(\S+)/.exec(line)
    if (running) targets.push(running[1]!)
    const doc = /^Doc-tests (\S+)/.exec(line)
    if (doc) targets.push(`doc:${doc[1]}`)
  }
  let section = -1
  for (const raw of stdout.split('\n')) {
    const line = raw.trim()
    if (/^running \d+ tests?$/.test(line)) section++
    const t = /^test (.+?) \.\.\. (ok|FAILED|ignored)/.exec(line)
    if (!t) continue
    const target = targets[section] ?? `#${section}`
    const key = `${target}::${t[1]}`
    if (t[2] === 'ok') passed.push({ key, file: target })
    else if (t[2] === 'FAILED') problems.push(failingTest(check, key, target, undefined, t[1]!))
  }
  return { status: 'ok', problems, passed, scope: 'all' }
}

/** `cargo test --no-fail-fast` (the whole suite: cargo has no reverse-dependency targeting). */
export class CargoTestCheck implements Check {
  readonly name = 'test'
  readonly verb = 'testing'

  constructor(private readonly root: string, private readonly extraArgs: string[] = []) {}

  async measure(_change: Change | undefined, io: CheckIO): Promise<Measurement> {
    return this.run(['cargo', 'test', '--no-fail-fast', ...this.extraArgs], io)
  }

  async confirm(problems: Problem[], io: CheckIO): Promise<Confirmation | undefined> {
    const still: Problem[] = []
    for (const p of problems) {
      const name = p.key.slice(p.key.indexOf('::') + 2)
      const m = await this.run(['cargo', 'test', '--no-fail-fast', name, '--', '--exact'], io)
      if (m.status !== 'ok') return undefined
      if (m.problems.some(q => q.key === p.key)) still.push(p)
    }
    return { still }
  }

  private async run(argv: string[], io: CheckIO): Promise<Measurement> {
    const r = await runRecorded(this.name, argv, this.root, io)
    if (r.outcome === 'timeout' || r.outcome === 'error') {
      return { status: r.outcome === 'timeout' ? 'timeout' : 'error', problems: [], scope: 'all', error: whyNotJudged('cargo test', r, io.timeoutMs) }
    }
    const m = parseCargoTest(this.name, r.stdout, r.stderr)
    if (r.exitCode !== 0 && !m.problems.length) {
      m.problems.push(failingTest(this.name, '(build)', '', undefined, `cargo test exited ${r.exitCode}: ${r.stderr.trim().split('\n').slice(-1)[0] ?? ''}`))
    }
    return m
  }
}
