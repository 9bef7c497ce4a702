/**
 * `dsh-guard` names its own commands: each `--help`, each usage error, and
 * the hints `status` gives say `dsh-guard setup` / `dsh-guard status`…, never
 * the `dsh hooks …` or `dsh proof …` of the repo's CLI, which a user of the
 * package does not have.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'

const main = resolve(dirname(fileURLToPath(import.meta.url)), '../src/main.ts')

function guard(args: string[], home: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { encoding: 'utf8', env: { ...process.env, HOME: home, PATH: '/usr/bin:/bin' } })
}

/** A `dsh <command>` of the repo's CLI named in a text (not `dsh-guard …`, not a word ending in dsh). */
const REPO_COMMAND = /(^|[^\w-])dsh (hooks|recover|proof|claims|try|run|review|undo|demo)\b/m

describe('dsh-guard names its own commands', () => {
  it.each(['setup', 'uninstall', 'status', 'recover', 'proof', 'claims', 'try', 'serve', 'mcp'])('%s --help is its own usage', command => {
    const r = guard([command, '--help'], tempDir('dsh-guard-names-home-'))
    expect(r.status).toBe(0)
    expect(r.stdout.startsWith(`Usage: dsh-guard ${command} `)).toBe(true)
    expect(r.stdout).not.toMatch(REPO_COMMAND)
  })

  it('usage errors name the dsh-guard command', () => {
    const home = tempDir('dsh-guard-names-home-')
    const cases: [string[], string][] = [
      [['setup'], 'dsh-guard setup: --agent is required (claude-code, codex, gemini)'],
      [['uninstall', '--agent', 'vim'], 'dsh-guard uninstall: unknown agent "vim" (known: claude-code, codex, gemini)'],
      [['status', '--bogus'], 'dsh-guard status: unknown flag --bogus (see dsh-guard status --help)'],
      [['proof'], 'dsh-guard proof: missing subcommand; use show or verify (see dsh-guard proof --help)'],
      [['recover'], 'dsh-guard recover: --workspace DIR is required (see dsh-guard recover --help)'],
    ]
    for (const [args, line] of cases) {
      const r = guard(args, home)
      expect(r.status, args.join(' ')).toBe(2)
      expect(r.stderr).toBe(`${line}\n`)
    }
  })

  it('status says to run dsh-guard setup where nothing is installed, and where the hooks were taken out by hand', () => {
    const home = tempDir('dsh-guard-names-home-')
    const ws = tempDir('dsh-guard-names-')
    const none = guard(['status', '--workspace', ws], home)
    expect(none.status).toBe(1)
    expect(none.stdout).toBe(`workspace ${ws}\ninstalled: nothing (dsh-guard setup --agent AGENT, or an agent plugin)\nhost: down (it starts on the next hook call)\n`)
    expect(guard(['setup', '--agent', 'claude-code', '--workspace', ws, '--no-start'], home).status).toBe(0)
    writeFileSync(join(ws, '.claude/settings.local.json'), '{}\n')
    const gone = guard(['status', '--workspace', ws], home)
    expect(gone.status).toBe(1)
    expect(gone.stdout.split('\n')[1]).toBe('claude-code: NOT guarded: no hook entry of ours in its configuration (removed since install); run dsh-guard setup --agent claude-code')
  })
})
