import { simpleCommands, type ShellCommand, type ShellScript } from './shell.ts'

/** What one command's run showed: it passed, it did not pass, or its status never reached the caller. */
export type RunOutcome = 'pass' | 'fail' | 'unknown'

/** Why a command's exit status was not seen. */
export type HiddenBy = 'pipe' | 'list' | 'or' | 'chain' | 'background' | 'control' | 'negated' | 'rollback'

export interface AttributedCommand {
  words: string[]
  outcome: RunOutcome
  /** Set when `outcome` is `unknown`. */
  hiddenBy?: HiddenBy
}

type Verdict = { outcome: RunOutcome; hiddenBy?: HiddenBy }
interface Modes { errexit: boolean; pipefail: boolean }

/**
 * Attribute a command line's one exit status to its simple commands, claiming
 * only what the status proves (bash semantics; `exit` is `null` when the run
 * was killed or timed out, which counts as not passing):
 * - the status is that of the last pipeline that ran in the last and-or list;
 * - status 0: a pipeline passed when only `&&` joins it, and everything after
 *   it, to the end (`a || b` with status 0 proves nothing about `b`, which
 *   may not have run);
 * - non-zero: the last pipeline did not pass (it failed, or never ran because
 *   an earlier one failed); the pipelines before it are unknown;
 * - earlier lists (`a; b`) are unknown, except under `set -e` with status 0,
 *   where a list of one pipeline of simple commands passed (else the shell
 *   would have stopped);
 * - in a pipeline only the last command's status is seen, unless
 *   `set -o pipefail` is on and the pipeline passed;
 * - a group `( … )` / `{ … }` is a command whose status is that of its inside;
 * - background (`&`), negated (`!`) and control-flow commands are unknown.
 */
export function attributeExit(script: ShellScript, exit: number | null, modes: Modes = { errexit: false, pipefail: false }): AttributedCommand[] {
  if (script.control) return attributeUnknown(script, 'control')
  const out: AttributedCommand[] = []
  let { errexit, pipefail } = modes
  const last = script.lists.length - 1
  script.lists.forEach((list, li) => {
    const n = list.pipelines.length
    const verdicts: Verdict[] = new Array(n)
    if (list.background) verdicts.fill({ outcome: 'unknown', hiddenBy: 'background' })
    else if (li === last && exit !== 0) {
      verdicts.fill({ outcome: 'unknown', hiddenBy: list.ops.includes('||') ? 'or' : 'chain' })
      verdicts[n - 1] = { outcome: 'fail' }
    } else if (li === last || (errexit && exit === 0 && n === 1 && list.pipelines[0]!.commands.every(c => 'words' in c))) {
      // Under `set -e` a failing simple command stops the shell; a `{ … }` group failing
      // inside an exempt `a && b` does not, so groups are not vouched for this way.
      for (let j = 0; j < n; j++) {
        verdicts[j] = list.ops.slice(Math.max(0, j - 1)).every(op => op === '&&') ? { outcome: 'pass' } : { outcome: 'unknown', hiddenBy: 'or' }
      }
    } else verdicts.fill({ outcome: 'unknown', hiddenBy: 'list' })

    list.pipelines.forEach((pipeline, pj) => {
      let verdict = verdicts[pj]!
      if (pipeline.negated && verdict.outcome !== 'unknown') verdict = { outcome: 'unknown', hiddenBy: 'negated' }
      const k = pipeline.commands.length
      pipeline.commands.forEach((command, ci) => {
        let v: Verdict = verdict
        if (k > 1 && verdict.outcome !== 'unknown') {
          // One status for the pipeline: the last command's, or (pipefail) any failing member's.
          if (verdict.outcome === 'pass') v = ci === k - 1 || pipefail ? verdict : { outcome: 'unknown', hiddenBy: 'pipe' }
          else v = ci === k - 1 && !pipefail ? verdict : { outcome: 'unknown', hiddenBy: 'pipe' }
        }
        // bash ignores `set -e` inside a group that is part of an &&/|| list, a pipeline or a `!`.
        const inner = { errexit: errexit && n === 1 && k === 1 && !pipeline.negated, pipefail }
        out.push(...attributeCommand(command, v, exit, inner))
      })
    })
    const only = n === 1 && list.pipelines[0]!.commands.length === 1 ? list.pipelines[0]!.commands[0]! : undefined
    const set = only && 'words' in only ? setModes(only.words) : {}
    errexit = set.errexit ?? errexit
    pipefail = set.pipefail ?? pipefail
  })
  return out
}

function attributeCommand(command: ShellCommand, verdict: Verdict, exit: number | null, modes: Modes): AttributedCommand[] {
  if ('words' in command) return [{ words: command.words, ...verdict }]
  if (verdict.outcome === 'unknown') return attributeUnknown(command.group, verdict.hiddenBy ?? 'list')
  // A group that did not pass: its last pipeline did not pass (it may never have run).
  return attributeExit(command.group, verdict.outcome === 'pass' ? 0 : exit === 0 ? 1 : exit, modes)
}

/** Every command of a line, all with the same unknown outcome (a status that was not seen). */
export function attributeUnknown(script: ShellScript, hiddenBy: HiddenBy): AttributedCommand[] {
  return simpleCommands(script).map(words => ({ words, outcome: 'unknown' as const, hiddenBy }))
}

/** Read `set -e`, `set -euo pipefail`, `set +e`, `set -o errexit`… */
function setModes(words: string[]): Partial<Modes> {
  if (words[0] !== 'set') return {}
  const modes: Partial<Modes> = {}
  for (let i = 1; i < words.length; i++) {
    const m = /^([-+])([a-zA-Z]+)$/.exec(words[i]!)
    if (!m) continue
    const on = m[1] === '-'
    if (m[2]!.includes('e')) modes.errexit = on
    if (m[2]!.includes('o')) {
      const name = words[++i]
      if (name === 'errexit') modes.errexit = on
      if (name === 'pipefail') modes.pipefail = on
    }
  }
  return modes
}
