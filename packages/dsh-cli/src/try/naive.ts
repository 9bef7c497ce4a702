import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { processTreeCpuMs, processTreeRssKb, runCommand } from 'dsh-common'
import type { Language } from './sources.ts'

/** One command of the naive check: what a guard without dsh would run after every write. */
export interface NaiveStep {
  label: string
  argv: string[]
}

export interface NaiveStepResult extends NaiveStep {
  exitCode: number | null
  ms: number
  /** CPU time the step's processes spent (user + system), in ms; undefined without `/proc`. */
  cpuMs?: number
  timedOut: boolean
}

export interface NaiveResult {
  steps: NaiveStepResult[]
  ms: number
  /** CPU time of every step together, in ms; undefined without `/proc`. */
  cpuMs?: number
  /** Peak resident memory of the commands (their process trees), in kB; undefined without `/proc`. */
  peakRssKb?: number
}

/**
 * The naive full check of a workspace, cold: a TypeScript project's whole
 * type-check (`tsc -b --force` over a solution tsconfig, else `tsc
 * --noEmit`) then its whole test suite (vitest or jest); a Go module's
 * `go build ./...`, `go vet ./...`, `go test ./...`; a Python package's
 * `pytest`. Steps whose tool is not installed are left out.
 */
export function naiveSteps(root: string, language: Language): NaiveStep[] {
  // A copy's node_modules is a symlink to the original's (workspace-copy.ts). A package
  // manager's .bin script may find its tool relative to where it was started from (pnpm's, in a
  // workspace package: `$basedir/../../../node_modules/.pnpm/…`), so start it at its real path.
  let modules = join(root, 'node_modules')
  try {
    modules = realpathSync(modules)
  } catch {
    // No node_modules: no step below exists.
  }
  const bin = (name: string) => join(modules, '.bin', name)
  if (language === 'typescript') {
    const steps: NaiveStep[] = []
    if (existsSync(bin('tsc')) && existsSync(join(root, 'tsconfig.json'))) {
      let solution = false
      try {
        solution = /"references"\s*:/.test(readFileSync(join(root, 'tsconfig.json'), 'utf8'))
      } catch {
        // Unreadable: the plain form.
      }
      steps.push(solution
        ? { label: 'tsc -b --force', argv: [bin('tsc'), '-b', '--force'] }
        : { label: 'tsc --noEmit', argv: [bin('tsc'), '--noEmit', '-p', 'tsconfig.json'] })
    }
    if (existsSync(bin('vitest'))) steps.push({ label: 'vitest run', argv: [bin('vitest'), 'run'] })
    else if (existsSync(bin('jest'))) steps.push({ label: 'jest', argv: [bin('jest')] })
    return steps
  }
  if (language === 'go') {
    return [
      { label: 'go build ./...', argv: ['go', 'build', './...'] },
      { label: 'go vet ./...', argv: ['go', 'vet', './...'] },
      { label: 'go test ./...', argv: ['go', 'test', './...'] },
    ]
  }
  return [{ label: 'pytest', argv: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'] }]
}

/** Run the naive check's steps one after another in `root`, timing each and sampling the memory of what they run. */
export async function runNaive(root: string, steps: readonly NaiveStep[], timeoutMs: number, onStep: (step: NaiveStep) => void): Promise<NaiveResult> {
  const own = () => processTreeRssKb(process.pid)
  let peak: number | undefined
  const sample = () => {
    const total = own()
    if (total === undefined) return
    const self = process.memoryUsage().rss / 1024
    peak = Math.max(peak ?? 0, total - self)
  }
  const timer = setInterval(sample, 250)
  const results: NaiveStepResult[] = []
  const started = performance.now()
  try {
    for (const step of steps) {
      onStep(step)
      const t = performance.now()
      const cpu = processTreeCpuMs(process.pid)
      const r = await runCommand(step.argv, { cwd: root, timeoutMs, maxOutputBytes: 1 << 20, env: { CI: '1', GOFLAGS: process.env.GOFLAGS ?? '-count=1' } })
      const after = processTreeCpuMs(process.pid)
      results.push({ ...step, exitCode: r.exitCode, ms: performance.now() - t, ...(cpu === undefined || after === undefined ? {} : { cpuMs: after - cpu }), timedOut: r.timedOut })
    }
  } finally {
    clearInterval(timer)
  }
  const cpuMs = results.every(r => r.cpuMs !== undefined) ? results.reduce((n, r) => n + r.cpuMs!, 0) : undefined
  return { steps: results, ms: performance.now() - started, ...(cpuMs === undefined ? {} : { cpuMs }), ...(peak === undefined ? {} : { peakRssKb: Math.round(peak) }) }
}
