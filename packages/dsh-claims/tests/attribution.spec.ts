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
  it('a single command gets the status', () => {
    expect(verdicts('pnpm test', 0)).toEqual(['test=pass'])
    expect(verdicts('pnpm test', 1)).toEqual(['test=fail'])
    expect(verdicts('pnpm test', null)).toEqual(['test=fail'])
  })

  it('&& chains: all passed on 0; on failure only the last is known not to have passed', () => {
    expect(verdicts('cd web && pnpm build && pnpm test', 0)).toEqual(['build=pass', 'test=pass'])
    expect(verdicts('cd web && pnpm build && pnpm test', 1)).toEqual(['build=unknown/chain', 'test=fail'])
  })

  it('; and newlines hide the status of everything but the last list', () => {
    expect(verdicts('pnpm test; echo done', 0)).toEqual(['test=unknown/list'])
    expect(verdicts('pnpm build\npnpm test', 1)).toEqual(['build=unknown/list', 'test=fail'])
  })

  it('|| hides the status of its left side, and of its right side on 0', () => {
    expect(verdicts('pnpm test || true', 0)).toEqual(['test=unknown/or'])
    expect(verdicts('make || make clean', 2)).toEqual(['make=unknown/or', 'make clean=fail'])
    expect(verdicts('go vet || go test && cargo test', 0)).toEqual(['go vet=unknown/or', 'go test=unknown/or', 'cargo test=pass'])
  })

  it('a pipe shows only its last command, unless pipefail is on and the pipeline passed', () => {
    expect(verdicts('pnpm vitest run 2>&1 | tail -20', 0)).toEqual(['vitest run=unknown/pipe', 'tail -20=pass'])
    expect(verdicts('pnpm vitest run 2>&1 | tail -20', 1)).toEqual(['vitest run=unknown/pipe', 'tail -20=fail'])
    expect(verdicts('set -o pipefail; pnpm vitest run | tail', 0)).toEqual(['vitest run=pass', 'tail=pass'])
    expect(verdicts('set -o pipefail; pnpm vitest run | tail', 1)).toEqual(['vitest run=unknown/pipe', 'tail=unknown/pipe'])
  })

  it('set -e: earlier single-pipeline lists passed when the whole line exited 0', () => {
    expect(verdicts('set -e\npnpm build\npnpm test', 0)).toEqual(['build=pass', 'test=pass'])
    expect(verdicts('set -e\npnpm build\npnpm test', 1)).toEqual(['build=unknown/list', 'test=fail'])
    // The left side of && is exempt from set -e.
    expect(verdicts('set -e; pnpm lint && pnpm build; pnpm test', 0)).toEqual(['lint=unknown/list', 'build=unknown/list', 'test=pass'])
  })

  it('groups carry their status inside; background, ! and control flow hide it', () => {
    expect(verdicts('(cd web && npm test) && make', 0)).toEqual(['test=pass', 'make=pass'])
    expect(verdicts('make || (cd web && npm test)', 1)).toEqual(['make=unknown/or', 'test=fail'])
    expect(verdicts('make & go test', 0)).toEqual(['make=unknown/background', 'go test=pass'])
    expect(verdicts('! make', 1)).toEqual(['make=unknown/negated'])
    expect(verdicts('if pnpm test; then make; fi', 0)).toEqual(['test=unknown/control', 'make=unknown/control'])
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
