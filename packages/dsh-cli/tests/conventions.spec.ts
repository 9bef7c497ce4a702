import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runCommand } from 'dsh-common'
import type { CliIO } from 'dsh-cli'
import { main, runMain } from '../src/main.ts'
import { parseArgs } from '../src/command.ts'
import { nodeFloor, nodeTooOld } from '../src/node-check.ts'
import { tempDir } from 'dsh-testkit'
import { repoRoot } from './helpers.ts'

function io(env: NodeJS.ProcessEnv = {}) {
  let stdout = ''
  let stderr = ''
  const it: CliIO = { stdout: t => { stdout += t }, stderr: t => { stderr += t }, stdin: Readable.from([]), stderrIsTTY: false, env }
  return { io: it, out: () => stdout, err: () => stderr }
}

const version = (JSON.parse(readFileSync(join(repoRoot, 'packages/dsh-cli/package.json'), 'utf8')) as { version: string }).version

describe('the dsh command line', () => {
  it('--workspace DIR is checked the same way by every command that takes one; a missing or unknown subcommand names the ones there are', async () => {
    const dir = tempDir()
    const file = join(dir, 'file.txt')
    writeFileSync(file, '')
    for (const command of ['run', 'chat', 'recover']) {
      const missing = io()
      expect(await main([command], missing.io)).toBe(2)
      expect(missing.err()).toBe(`dsh ${command}: --workspace DIR is required (see dsh ${command} --help)\n`)
    }
    for (const command of ['run', 'chat', 'recover', 'dev']) {
      const absent = io()
      expect(await main([command, '--workspace', join(dir, 'absent')], absent.io)).toBe(2)
      expect(absent.err()).toBe(`dsh ${command}: workspace ${join(dir, 'absent')} does not exist\n`)
      const notDir = io()
      expect(await main([command, '--workspace', file], notDir.io)).toBe(2)
      expect(notDir.err()).toBe(`dsh ${command}: workspace ${file} is not a directory\n`)
    }
    const subs: [string, string][] = [['claims', 'check or show'], ['proof', 'show or verify']]
    for (const [command, names] of subs) {
      const none = io()
      expect(await main([command], none.io)).toBe(2)
      expect(none.err()).toBe(`dsh ${command}: missing subcommand; use ${names} (see dsh ${command} --help)\n`)
      const unknown = io()
      expect(await main([command, 'frob'], unknown.io)).toBe(2)
      expect(unknown.err()).toBe(`dsh ${command}: unknown subcommand "frob"; use ${names} (see dsh ${command} --help)\n`)
    }
  })

  it('--version, dsh help <command>, and bare dsh printing help (exit 0)', async () => {
    const v = io()
    expect(await main(['--version'], v.io)).toBe(0)
    expect(v.out()).toBe(`dsh ${version}\n`)
    const viaHelp = io()
    const viaFlag = io()
    expect(await main(['help', 'run'], viaHelp.io)).toBe(0)
    expect(await main(['run', '--help'], viaFlag.io)).toBe(0)
    expect(viaHelp.out()).toMatch(/^Usage: dsh run /)
    expect(viaHelp.out()).toBe(viaFlag.out())
    const bare = io()
    expect(await main([], bare.io)).toBe(0)
    expect(bare.out()).toContain('Commands:\n  run ')
    const unknown = io()
    expect(await main(['help', 'nope'], unknown.io)).toBe(2)
    expect(unknown.err()).toMatch(/^dsh: unknown command "nope" \(commands: run, /)
  })

  it('flags are parsed by node:util parseArgs, with dsh\'s one-line usage errors', () => {
    const spec = { flags: { workspace: 'string', json: 'boolean', watch: 'strings' }, positionals: { max: 1, name: 'PROMPT' } } as const
    const problem = (argv: string[]) => {
      try {
        parseArgs(argv, spec, 'run')
        return 'ok'
      } catch (error) {
        return (error as Error).message
      }
    }
    expect(parseArgs(['--workspace=w', '--watch', 'a', '--watch=b', '--json', 'p'], spec, 'run')).toEqual({ flags: { workspace: 'w', watch: ['a', 'b'], json: true }, positionals: ['p'] })
    expect(parseArgs(['-h'], spec, 'run').flags.help).toBe(true)
    expect(parseArgs(['--', '--json'], { ...spec, positionals: { max: 1 } }, 'run').positionals).toEqual(['--json'])
    expect(problem(['--workspace'])).toBe('dsh run: --workspace needs a value')
    expect(problem(['--workspace', '--json'])).toBe('dsh run: --workspace needs a value')
    expect(problem(['--json=yes'])).toBe('dsh run: --json takes no value')
    expect(problem(['--nope'])).toBe('dsh run: unknown flag --nope (see dsh run --help)')
    expect(problem(['-x'])).toBe('dsh run: unknown flag -x (see dsh run --help)')
    expect(problem(['a', 'b'])).toBe('dsh run: unexpected argument "b" (see dsh run --help)')
  })

  it('a crash in bin/dsh.mjs goes through the same error path: one "dsh: …" line, exit 1, no stack', async () => {
    const file = join(tempDir(), 'not-a-dir')
    writeFileSync(file, '')
    const r = await runCommand([process.execPath, join(repoRoot, 'packages/dsh-cli/bin/dsh.mjs'), 'claims', 'show', '--vault', file], { cwd: repoRoot, timeoutMs: 60_000 })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toBe(`dsh: ENOTDIR: not a directory, scandir '${file}/checkpoints' (DSH_DEBUG=1 shows where)\n`)
    const debug = io({ DSH_DEBUG: '1' })
    expect(await runMain(['claims', 'show', '--vault', file], debug.io)).toBe(1)
    expect(debug.err()).toMatch(/^dsh: Error: ENOTDIR[^\n]*\n\s+at /)
  })

  it('the Node floor is engines\' (>=20.6.0: module.register), stated once and checked with one line', () => {
    const rootEngines = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
    expect(nodeFloor()).toBe('20.6.0')
    expect(rootEngines).toBe('>=20.6.0')
    expect(nodeTooOld('20.5.1')).toBe('dsh: Node.js 20.6.0 or newer is needed (this is 20.5.1)')
    expect(nodeTooOld('18.20.0')).toBe('dsh: Node.js 20.6.0 or newer is needed (this is 18.20.0)')
    expect(nodeTooOld('20.6.0')).toBeUndefined()
    expect(nodeTooOld('22.1.0')).toBeUndefined()
    const launcher = readFileSync(join(repoRoot, 'packages/dsh-cli/bin/dsh.mjs'), 'utf8')
    expect(launcher.indexOf("engines.node")).toBeLessThan(launcher.indexOf("import('tsx/esm/api')"))
  })

  it('every npx in the README\'s shell blocks passes --yes (a non-interactive shell refuses to install otherwise)', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map(m => m[1]!)
    const npx = blocks.flatMap(b => b.split('\n')).flatMap(line => [...line.matchAll(/\bnpx\b[^&|;#]*/g)].map(m => m[0].trim()))
    expect(npx.length).toBeGreaterThanOrEqual(3)
    expect(npx.filter(c => !/^npx --yes /.test(c))).toEqual([])
  })
})
