/**
 * The agents' manifests: the repository's own are the ones the build writes
 * (`build.ts --repo-manifests`), none holds a path of this machine, and the
 * launcher of a copied extension finds the package or passes.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'
import { agentManifests, repoManifests } from 'dsh-guard'

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const repo = resolve(pkgDir, '../..')
const { version, description } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string; description: string }

describe('dsh-guard manifests', () => {
  it('the repository root holds what the build writes (tsx packages/dsh-guard/src/build.ts --repo-manifests)', () => {
    for (const [file, text] of Object.entries(repoManifests(version, description))) expect(readFileSync(join(repo, file), 'utf8'), file).toBe(text)
  })

  it('no manifest names a path of this machine: the plugin root, the extension path, the project come from the agent', () => {
    const pkg = agentManifests(version, description)
    for (const [file, text] of [...Object.entries(pkg), ...Object.entries(repoManifests(version, description))]) {
      expect(text, file).not.toContain(repo)
      expect(text, file).not.toMatch(/["' ]\/(tmp|root|home|usr|work)\//)
    }
    const claude = JSON.parse(pkg['hooks/hooks.json']!) as { hooks: Record<string, { hooks: { command: string }[] }[]> }
    expect(claude.hooks.PreToolUse![0]!.hooks[0]!.command).toBe('sh "${CLAUDE_PLUGIN_ROOT}/assets/packages/dsh-host-hooks/bin/dsh-hook" "$CLAUDE_PROJECT_DIR" claude-code PreToolUse 298 60')
  })

  it('the launcher runs the package around it, else the dsh-guard on PATH, else passes saying why', () => {
    const run = (launcher: string, path: string) => spawnSync('sh', [launcher, 'mcp', '--x'], { encoding: 'utf8', env: { PATH: path, DSH_NODE: 'echo' } })
    // A package around the launcher (an extension linked in place).
    const pkg = tempDir('dsh-guard-launcher-')
    mkdirSync(join(pkg, 'gemini'))
    copyFileSync(join(pkgDir, 'hook'), join(pkg, 'gemini/hook'))
    writeFileSync(join(pkg, 'cli.mjs'), '')
    expect(run(join(pkg, 'gemini/hook'), '/usr/bin:/bin').stdout).toBe(`${pkg}/cli.mjs hooks mcp --x\n`)
    // A copy elsewhere: the dsh-guard on PATH, through npm's bin link.
    const copy = tempDir('dsh-guard-copy-')
    copyFileSync(join(pkgDir, 'hook'), join(copy, 'hook'))
    const bin = tempDir('dsh-guard-bin-')
    spawnSync('ln', ['-s', join(pkg, 'cli.mjs'), join(bin, 'dsh-guard')])
    chmodSync(join(pkg, 'cli.mjs'), 0o755)
    expect(run(join(copy, 'hook'), `${bin}:/usr/bin:/bin`).stdout).toBe(`${pkg}/cli.mjs hooks mcp --x\n`)
    // The package's own `dsh-guard-hook` command, as npm links it onto PATH: run by its name.
    copyFileSync(join(pkgDir, 'hook'), join(pkg, 'hook'))
    chmodSync(join(pkg, 'hook'), 0o755)
    spawnSync('ln', ['-s', join(pkg, 'hook'), join(bin, 'dsh-guard-hook')])
    const linked = spawnSync('dsh-guard-hook', ['mcp', '--x'], { encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin`, DSH_NODE: 'echo' } })
    expect(linked.stdout).toBe(`${pkg}/cli.mjs hooks mcp --x\n`)
    // Nothing installed: exit 0, the reason on stderr.
    const none = run(join(copy, 'hook'), '/usr/bin:/bin')
    expect(none.status).toBe(0)
    expect(none.stderr).toBe('dsh-guard is not installed (npm i -g dsh-guard): this call is not verified\n')
  })
})
