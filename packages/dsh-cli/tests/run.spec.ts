import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CORE_ENTRIES, tempDir, writeScript } from 'dsh-testkit'
import { dsh } from './helpers.ts'

/** A harness without the guards, persisting its logs. */
const minimalConfig = `# a harness without the guards\n${CORE_ENTRIES}- id: sessions-jsonl\n  name: dsh-session/jsonl\n`

describe('dsh run', () => {
  it('--script --json prints only the session events, from a cordis.yml outside the repo; write_file, edit_file and bash really ran', async () => {
    const dir = tempDir()
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    execFileSync('git', ['init', '-q'], { cwd: ws })
    const config = join(dir, 'elsewhere', 'cordis.yml')
    mkdirSync(join(dir, 'elsewhere'))
    writeFileSync(config, minimalConfig)
    const script = writeScript(dir, [
      { text: 'writing', toolCalls: [{ name: 'write_file', arguments: { path: 'notes/a.txt', content: 'one\n' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes/a.txt', old_string: 'one', new_string: 'two' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'cat notes/a.txt && echo ran > ran.txt' } }] },
      { text: 'done' },
    ])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'])
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    const events = r.stdout.trim().split('\n').map(l => JSON.parse(l))
    expect(events[0]).toMatchObject({ seq: 0, type: 'user/message', data: { text: 'Follow the script.' } })
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
    const results = events.filter(e => e.type === 'tool/result').map(e => [e.data.name, e.data.isError])
    expect(results).toEqual([['write_file', false], ['edit_file', false], ['bash', false]])
    expect(events.find(e => e.type === 'tool/result' && e.data.name === 'bash').data.content).toBe('two\n[exit code 0]')
    expect(readFileSync(join(ws, 'notes/a.txt'), 'utf8')).toBe('two\n')
    expect(existsSync(join(ws, 'ran.txt'))).toBe(true)
    // The persisted log holds the same events.
    const [log] = readdirSync(join(ws, '.dsh/sessions'))
    const stored = readFileSync(join(ws, '.dsh/sessions', log!), 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(stored).toEqual(events)
    // The vault ignores itself: git sees only what the agent wrote.
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ws, encoding: 'utf8' })).toBe('?? notes/a.txt\n?? ran.txt\n')
  })

  it('prints a readable transcript without --json', async () => {
    const dir = tempDir()
    const config = join(dir, 'cordis.yml')
    writeFileSync(config, minimalConfig)
    const script = writeScript(dir, [{ text: 'hello there', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'bye' }])
    const r = await dsh(['run', 'say hi', '--workspace', dir, '--script', script, '--config', config])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('› say hi\nassistant: hello there\n  → bash echo hi\n  ✓ bash\n      hi\n      [exit code 0]\nassistant: bye\n')
  })

  it('exits 1 when the turn ends with an error (step limit from the config)', async () => {
    const dir = tempDir()
    const config = join(dir, 'cordis.yml')
    writeFileSync(config, minimalConfig.replace('  name: dsh-agent\n', '  name: dsh-agent\n  config:\n    maxSteps: 1\n'))
    const script = writeScript(dir, [{ toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }, { text: 'never reached' }])
    const r = await dsh(['run', '--workspace', dir, '--script', script, '--config', config])
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toContain('error: step limit reached: maxSteps is 1 (dsh-agent config)\nturn ended: error\n')
  })

  it('bad input: one clear line naming the problem, exit 2, nothing written', async () => {
    const dir = tempDir()
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    const good = writeScript(dir, [{ text: 'x' }])
    const badScript = join(dir, 'bad.jsonl')
    writeFileSync(badScript, '{"text":"ok"}\n{"toolCalls": [}\n')
    const badYaml = join(dir, 'bad.yml')
    writeFileSync(badYaml, '- id: a\n  name: dsh-session\n - broken: [\n')
    const unknown = join(dir, 'unknown.yml')
    writeFileSync(unknown, '- id: sessions\n  name: dsh-session\n- id: nope\n  name: dsh-does-not-exist\n')
    const cases: [string[], RegExp][] = [
      [['run', '--workspace', ws, '--script', badScript], new RegExp(`^dsh run: ${badScript}:2: not valid JSON`)],
      [['run', '--workspace', ws, '--script', good, '--frobnicate'], /^dsh run: unknown flag --frobnicate/],
      [['run', '--workspace', join(dir, 'missing'), '--script', good], /^dsh run: workspace .*missing does not exist/],
      [['run', '--workspace', ws, '--script', good, '--config', badYaml], new RegExp(`^dsh run: ${badYaml}:3:\\d+: invalid YAML`)],
      [['run', '--workspace', ws, '--script', good, '--config', unknown], new RegExp(`^dsh run: ${unknown}:4: plugin "dsh-does-not-exist" \\(entry nope\\) is not installed`)],
      [['run', '--workspace', ws], /^dsh run: give a PROMPT, or --script FILE/],
      [['run', 'hello', '--workspace', ws], /^dsh run: no API key: set DEEPSEEK_API_KEY/],
      [['frob'], /^dsh: unknown command "frob"/],
    ]
    // All at once: on a loaded machine each process waits for a core, not for the others.
    const results = await Promise.all(cases.map(([args]) => dsh(args)))
    for (const [i, [args, pattern]] of cases.entries()) {
      const r = results[i]!
      expect(r.exitCode, args.join(' ')).toBe(2)
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
      expect(r.stderr, args.join(' ')).toMatch(pattern)
      expect(r.stdout).toBe('')
    }
    expect(readdirSync(ws)).toEqual([])
  })

  it('--help for every command is printed and exits 0', async () => {
    const top = await dsh(['--help'])
    expect(top.exitCode).toBe(0)
    const names = [...top.stdout.matchAll(/^  (\S+)\s{2,}/gm)].map(m => m[1]!)
    expect(names).toContain('run')
    expect(names).toContain('demo')
    const helps = await Promise.all(names.map(name => dsh([name, '--help'])))
    for (const [i, name] of names.entries()) {
      const r = helps[i]!
      expect(r.exitCode, name).toBe(0)
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: dsh ${name}`))
    }
  })
})
