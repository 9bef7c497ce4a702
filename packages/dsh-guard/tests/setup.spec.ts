/**
 * `dsh-guard setup` where its commands are not on PATH (run from source, as
 * through npx): a project install for an agent whose project files a team
 * commits (Codex, Gemini CLI) is refused, naming what to do, and writes
 * nothing; `--user` still installs, for every project.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'

const main = resolve(dirname(fileURLToPath(import.meta.url)), '../src/main.ts')

function guard(args: string[], home: string, path = '/usr/bin:/bin') {
  return spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { encoding: 'utf8', env: { ...process.env, HOME: home, PATH: path } })
}

describe('dsh-guard setup without its commands on PATH', () => {
  it.each(['codex', 'gemini'])('refuses a project install for %s, writing nothing, and says what to do', agent => {
    const ws = tempDir('dsh-guard-setup-')
    const home = tempDir('dsh-guard-setup-home-')
    const r = guard(['setup', '--agent', agent, '--workspace', ws, '--no-start'], home)
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`${agent} keeps a project's hooks only in files a team commits; dsh-guard-hook is not on PATH, so they would hold this machine's paths. Install the package with npm i -g (dsh-guard, or its packed tarball) and run this again (or --user: every project).\n`)
    expect(readdirSync(ws)).toEqual([])
    expect(readdirSync(home)).toEqual([])
  })

  it('refuses when the dsh-guard-hook on PATH is another installation\'s', () => {
    const ws = tempDir('dsh-guard-setup-')
    const home = tempDir('dsh-guard-setup-home-')
    const bin = tempDir('dsh-guard-setup-bin-')
    writeFileSync(join(bin, 'dsh-guard-hook'), '#!/bin/sh\n')
    chmodSync(join(bin, 'dsh-guard-hook'), 0o755)
    const r = guard(['setup', '--agent', 'gemini', '--workspace', ws, '--no-start'], home, `${bin}:/usr/bin:/bin`)
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`gemini keeps a project's hooks only in files a team commits; the dsh-guard-hook on PATH (${bin}/dsh-guard-hook) is not this one (${join(dirname(main), 'hook')}), so they would hold this machine's paths. Install the package with npm i -g (dsh-guard, or its packed tarball) and run this again (or --user: every project).\n`)
    expect(readdirSync(ws)).toEqual([])
  })

  it('installs --user for Codex, in the home directory, and says so', () => {
    const home = tempDir('dsh-guard-setup-home-')
    const r = guard(['setup', '--agent', 'codex', '--user'], home)
    expect(r.stderr).toBe('')
    expect(r.stdout.split('\n').slice(0, 3)).toEqual(['installed dsh hooks for codex (user-level: every project):', '  ~/.codex/hooks.json: created', '  ~/.codex/config.toml: created'])
    const hooks = JSON.parse(readFileSync(join(home, '.codex/hooks.json'), 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> }
    // The project is the hook's directory, named at each call.
    expect(hooks.hooks.PreToolUse![0]!.hooks[0]!.command).toMatch(/^sh '\/.+\/dsh-hook' "\$PWD" codex PreToolUse 298 60$/)
    // The MCP server's block is marked with the commands that wrote it and take it out: this package's, not the repo's.
    expect(readFileSync(join(home, '.codex/config.toml'), 'utf8').split('\n')[0]).toBe('# dsh hooks: begin (written by `dsh-guard setup`; `dsh-guard uninstall` takes it out)')
    const undone = guard(['uninstall', '--agent', 'codex', '--user'], home)
    expect(undone.stderr).toBe('')
    expect(existsSync(join(home, '.codex'))).toBe(false)
  })
})
