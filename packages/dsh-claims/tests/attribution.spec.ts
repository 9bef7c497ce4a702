import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { attributeExit, formatKey, parseShell, unwrapCommand, type AttributedCommand } from 'dsh-claims'
import { tempDir } from './helpers.ts'

/** `DSH_LONG=1` runs the bash property 5000 times instead of 200. */
const LONG = !!process.env.DSH_LONG

/** `key=outcome[/hiddenBy]` for every keyed command, in order. */
function verdicts(command: string, exit: number | null): string[] {
  return attributeExit(parseShell(command), exit).flatMap((a: AttributedCommand) => {
    const what = unwrapCommand(a.words)
    if (!what || !('key' in what)) return []
    return [`${formatKey(what.key)}=${a.outcome}${a.hiddenBy ? `/${a.hiddenBy}` : ''}`]
  })
}

describe('attributing one exit status to the commands of a compound command', () => {
  it.each<[command: string, exit: number | null, verdicts: string[]]>([
    // A single command gets the status.
    ['pnpm test', 0, ['test=pass']],
    ['pnpm test', 1, ['test=fail']],
    ['pnpm test', null, ['test=fail']],
    // && chains: all passed on 0; on failure only the last is known not to have passed.
    ['cd web && pnpm build && pnpm test', 0, ['build=pass', 'test=pass']],
    ['cd web && pnpm build && pnpm test', 1, ['build=unknown/chain', 'test=fail']],
    // ; and newlines hide the status of everything but the last list.
    ['pnpm test; echo done', 0, ['test=unknown/list']],
    ['pnpm build\npnpm test', 1, ['build=unknown/list', 'test=fail']],
    // || hides the status of its left side, and of its right side on 0.
    ['pnpm test || true', 0, ['test=unknown/or']],
    ['make || make clean', 2, ['make=unknown/or', 'make clean=fail']],
    ['go vet || go test && cargo test', 0, ['go vet=unknown/or', 'go test=unknown/or', 'cargo test=pass']],
    // A pipe shows only its last command, unless pipefail is on and the pipeline passed.
    ['pnpm vitest run 2>&1 | tail -20', 0, ['vitest run=unknown/pipe', 'tail -20=pass']],
    ['pnpm vitest run 2>&1 | tail -20', 1, ['vitest run=unknown/pipe', 'tail -20=fail']],
    ['set -o pipefail; pnpm vitest run | tail', 0, ['vitest run=pass', 'tail=pass']],
    ['set -o pipefail; pnpm vitest run | tail', 1, ['vitest run=unknown/pipe', 'tail=unknown/pipe']],
    // set -e: earlier single-pipeline lists passed when the whole line exited 0 (the left side of && is exempt).
    ['set -e\npnpm build\npnpm test', 0, ['build=pass', 'test=pass']],
    ['set -e\npnpm build\npnpm test', 1, ['build=unknown/list', 'test=fail']],
    ['set -e; pnpm lint && pnpm build; pnpm test', 0, ['lint=unknown/list', 'build=unknown/list', 'test=pass']],
    // Groups carry their status inside; background, ! and control flow hide it.
    ['(cd web && npm test) && make', 0, ['test=pass', 'make=pass']],
    ['make || (cd web && npm test)', 1, ['make=unknown/or', 'test=fail']],
    ['make & go test', 0, ['make=unknown/background', 'go test=pass']],
    ['! make', 1, ['make=unknown/negated']],
    ['if pnpm test; then make; fi', 0, ['test=unknown/control', 'make=unknown/control']],
  ])('%j exiting %j: %j', (command, exit, expected) => {
    expect(verdicts(command, exit)).toEqual(expected)
  })

  it('is sound against real bash: "pass" ran and exited 0, "fail" did not pass (property)', async () => {
    const dir = tempDir()
    const ran = join(dir, 'ran.log')
    // A shell function (no process per command) that logs that it ran and returns its code.
    const define = 'r() { echo "$1 $2" >> "$RLOG"; return "$2"; }\n'

    type Elem = { cmd: 0 | 1 | 2 } | { group: Script; paren: boolean }
    type Pipe = { negated: boolean; elems: Elem[] }
    type List = { pipes: Pipe[]; ops: ('&&' | '||')[]; sep: ';' | '\n' }
    type Script = List[]
    const { script } = fc.letrec<{ script: Script; list: List; pipe: Pipe; elem: Elem }>(tie => ({
      script: fc.array(tie('list'), { minLength: 1, maxLength: 3 }),
      list: fc.record({
        pipes: fc.array(tie('pipe'), { minLength: 1, maxLength: 3 }),
        ops: fc.array(fc.constantFrom<'&&' | '||'>('&&', '||'), { minLength: 2, maxLength: 2 }),
        sep: fc.constantFrom<';' | '\n'>(';', '\n'),
      }),
      pipe: fc.record({ negated: fc.constantFrom(false, false, false, true), elems: fc.array(tie('elem'), { minLength: 1, maxLength: 2 }) }),
      elem: fc.oneof(
        { maxDepth: 2, depthIdentifier: 'group' },
        fc.record({ cmd: fc.constantFrom<0 | 1 | 2>(0, 1, 2) }),
        fc.record({ group: tie('script'), paren: fc.boolean() }),
      ),
    }))
    const prefix = fc.constantFrom('', '', 'set -e\n', 'set -o pipefail\n', 'set -euo pipefail\n')

    const render = (s: Script, ids: { n: number }): string => s.map(list => list.pipes.map((pipe, i) =>
      (i ? ` ${list.ops[(i - 1) % 2]} ` : '') + (pipe.negated ? '! ' : '') + pipe.elems.map(e => {
        if ('cmd' in e) return `r ${++ids.n} ${e.cmd}`
        const inner = render(e.group, ids)
        return e.paren ? `( ${inner} )` : `{ ${inner}; }`
      }).join(' | ')).join('') + list.sep).join('').replace(/[;\n]$/, '')

    const bash = (line: string) => new Promise<number | null>((resolve, reject) => {
      const child = spawn('bash', ['-c', line], { cwd: dir, env: { ...process.env, RLOG: ran }, stdio: 'ignore' })
      child.on('error', reject)
      child.on('exit', code => resolve(code))
    })

    await fc.assert(fc.asyncProperty(prefix, script, async (pre, s) => {
      const line = pre + render(s, { n: 0 })
      rmSync(ran, { force: true })
      const status = await bash(define + line)
      const exits = new Map<string, number>()
      let text = ''
      try { text = readFileSync(ran, 'utf8') } catch { /* ENOENT: nothing ran */ }
      for (const row of text.split('\n').filter(Boolean)) {
        const [id, code] = row.split(' ')
        exits.set(id!, Number(code))
      }
      const attributed = attributeExit(parseShell(line), status)
      const leaves = (line.match(/\br \d+/g) ?? []).length
      expect(attributed.filter(a => a.words[0] === 'r')).toHaveLength(leaves)
      for (const a of attributed) {
        if (a.words[0] !== 'r') continue
        const id = a.words[1]!
        if (a.outcome === 'pass') expect(exits.get(id), `${JSON.stringify(line)} exit ${status}: ${id} pass`).toBe(0)
        if (a.outcome === 'fail') expect(exits.get(id), `${JSON.stringify(line)} exit ${status}: ${id} fail`).not.toBe(0)
      }
    }), { numRuns: LONG ? 5000 : 200 })
  }, LONG ? 900_000 : 60_000)
})
