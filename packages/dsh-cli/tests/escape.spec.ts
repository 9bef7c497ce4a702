import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { isolationSupport } from 'dsh-common'
import { GENESIS, headPath, sealEntry, type ProofEntry } from 'dsh-proofchain'
import { CORE_ENTRIES, tempDir, writeScript } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

const namespaces = isolationSupport().mode === 'namespaces'
const logged = `${CORE_ENTRIES}- id: sessions-jsonl\n  name: dsh-session/jsonl\n`

/** Running processes (not zombies) whose command line is exactly `argv`. */
function runningExactly(argv: string[]): number[] {
  const want = argv.join('\0') + '\0'
  return readdirSync('/proc').filter(n => /^\d+$/.test(n)).map(Number).filter(pid => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`, 'utf8') === want
    } catch {
      return false // ENOENT: it ended while we looked.
    }
  })
}

function setup(config = logged) {
  const dir = tempDir()
  const ws = join(dir, 'ws')
  mkdirSync(ws)
  writeFileSync(join(dir, 'cordis.yml'), config)
  return { dir, ws, config: join(dir, 'cordis.yml') }
}

function sessionLogText(ws: string): string {
  const dir = join(ws, '.dsh/sessions')
  return readdirSync(dir).map(f => readFileSync(join(dir, f), 'utf8')).join('')
}

describe('credentials: not reachable from a command, masked in what is logged and shown to the model', () => {
  it.skipIf(!namespaces)('a real dsh run started with credentials: the command finds none in /proc/$PPID/environ nor any /proc/*/environ; a value printed from a file is masked', async () => {
    const { dir, ws, config } = setup()
    const secret = `sk-dshtest-${process.pid}-${Date.now()}`
    writeFileSync(join(ws, 'leaked.txt'), `${secret}\n`)
    const command = [
      // Read first, count after: in a pipe, grep's count and the shell's error for the redirect race each other.
      `env=$(tr '\\0' '\\n' < /proc/$PPID/environ); printf '%s' "$env" | grep -c dshtest`,
      `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c dshtest`,
      'cat leaked.txt',
    ].join('; ')
    const script = writeScript(dir, [{ toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'done' }])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'], {
      env: { OPENAI_API_KEY: secret, DSH_API_KEY: `${secret}-dsh`, AWS_SECRET_ACCESS_KEY: `${secret}-aws`, NPM_TOKEN: `${secret}-npm` },
    })
    expect(r.exitCode).toBe(0)
    const result = r.stdout.trim().split('\n').map(l => JSON.parse(l)).find(e => e.type === 'tool/result')
    // The harness is outside the command's PID namespace: its parent there is the namespace's init (dsh's own, not readable by it).
    expect(result.data.content).toBe('bash: line 1: /proc/1/environ: Permission denied\n0\n0\n[redacted OPENAI_API_KEY]\n[exit code 0]')
    expect(sessionLogText(ws)).not.toContain(secret)
    expect(r.stdout).not.toContain(secret)
  }, 120_000)
})

/** A test the agent writes: what it finds of dsh's credentials, in its own environment and in its ancestors' `/proc/<pid>/environ`. */
const leakTest = `import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

function fromAncestors(): string {
  for (let pid = process.ppid; pid > 1;) {
    try {
      const found = readFileSync(\`/proc/\${pid}/environ\`, 'utf8').split('\\0').find(v => v.startsWith('OPENAI_API_KEY='))
      if (found) return found.slice('OPENAI_API_KEY='.length)
      pid = Number(readFileSync(\`/proc/\${pid}/stat\`, 'utf8').split(') ')[1]!.split(' ')[1])
    } catch {
      return 'unreadable'
    }
  }
  return 'none'
}

it('own environment', () => {
  const seen = [process.env.OPENAI_API_KEY, process.env.DSH_API_KEY, process.env.AWS_SECRET_ACCESS_KEY, process.env.NPM_TOKEN]
  expect(seen.join('|')).toBe('')
})

it('ancestors', () => expect(fromAncestors()).toBe('none'))
`

describe('credentials: not in any check a write starts; masked in the verdict, the proof chain and the log', () => {
  it('a real dsh run with credentials: the vitest run the guard starts has none in its environment; one read from dsh\'s /proc entry is masked everywhere', async () => {
    // background: false: the write's whole verdict in its own result (asserted below).
    const guarded = `${logged}- id: snapshot\n  name: dsh-snapshot\n- id: dstvalid\n  name: dsh-dstvalid\n  config:\n    profiles: [typescript]\n    background: false\n- id: proofchain\n  name: dsh-proofchain\n`
    const { dir, ws, config } = setup(guarded)
    writeFileSync(join(ws, 'package.json'), '{ "name": "leak", "private": true, "type": "module" }\n')
    writeFileSync(join(ws, 'tsconfig.json'), '{ "compilerOptions": { "strict": true, "noEmit": true, "module": "ESNext", "moduleResolution": "bundler", "skipLibCheck": true, "types": [] }, "include": ["src"] }\n')
    mkdirSync(join(ws, 'src'))
    writeFileSync(join(ws, 'src/a.ts'), 'export const a = 1\n')
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'))
    const secret = `sk-dshtest-${process.pid}-${Date.now()}`
    const script = writeScript(dir, [{ toolCalls: [{ name: 'write_file', arguments: { path: 'tests/leak.test.ts', content: leakTest } }] }, { text: 'done' }])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'], {
      env: { OPENAI_API_KEY: secret, DSH_API_KEY: `${secret}-dsh`, AWS_SECRET_ACCESS_KEY: `${secret}-aws`, NPM_TOKEN: `${secret}-npm`, DSH_ISOLATION: 'off' },
    })
    expect(r.exitCode).toBe(0)
    const events = r.stdout.trim().split('\n').map(l => JSON.parse(l))
    // The vitest run found the checks' tools (PATH, HOME …) and no credential; what it read from dsh's own process is masked.
    expect(events.find(e => e.type === 'tool/result').data.content).toBe([
      `created tests/leak.test.ts (${Buffer.byteLength(leakTest)} bytes)`,
      'not type-checked: tests/leak.test.ts is in no tsconfig program',
      'warning: kept, but test has new problems in tests (test-first work? make them pass):',
      "tests/leak.test.ts:17 FAIL own environment — AssertionError: expected '|||' to be '' // Object.is equality",
      "tests/leak.test.ts:22 FAIL ancestors — AssertionError: expected '[redacted OPENAI_API_KEY]' to be 'none' // Object.is equality",
    ].join('\n'))
    const chain = readFileSync(join(ws, '.dsh/proofchain.jsonl'), 'utf8')
    expect(chain).toContain('[redacted OPENAI_API_KEY]')
    for (const text of [r.stdout, r.stderr, chain, sessionLogText(ws)]) expect(text).not.toContain(secret)
  }, 120_000)
})

/** What a process run as a check imports to look for dsh. */
const probeImports = "import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'\n"

/**
 * Statements that look for dsh (`pidFile` holds its pid) and its credentials, and write what they
 * found as JSON to `out`: dsh's environ in `/proc` (`ENOENT`: no such process in their view), how
 * many environ files under `/proc` they can read that hold the key, whether dsh's key store shows,
 * and what writing into the vault (`.dsh/`, from the workspace) does.
 */
const probe = (pidFile: string, keyFile: string, out: string) => `const pid = readFileSync(${JSON.stringify(pidFile)}, 'utf8').trim()
let dsh
try {
  dsh = readFileSync(\`/proc/\${pid}/environ\`, 'utf8').includes('OPENAI_API_KEY=') ? 'readable, with the key' : 'readable, without the key'
} catch (error) {
  dsh = error.code
}
const processes = readdirSync('/proc').filter(n => /^\\d+$/.test(n))
const withKey = processes.filter(n => { try { return readFileSync(\`/proc/\${n}/environ\`, 'utf8').includes('OPENAI_API_KEY=') } catch { return false } })
let vault
try {
  writeFileSync('.dsh/forged.jsonl', '{}\\n')
  vault = 'written'
} catch (error) {
  vault = error.code
}
writeFileSync(${JSON.stringify(out)}, JSON.stringify({ dsh, seesDsh: processes.includes(pid), withKey: withKey.length, keyStore: existsSync(${JSON.stringify(keyFile)}), vault }))
`

describe('checks run where dsh cannot be seen (ADR 0015)', () => {
  it.skipIf(!namespaces)('a real dsh run with credentials: an agent-written vitest test (warm runner) and a compile command find no dsh process, no environment with the key, no key store, and cannot write the vault', async () => {
    // background: false: the write's whole verdict in its own result (asserted below).
    const guarded = `${logged}- id: snapshot\n  name: dsh-snapshot\n- id: dstvalid\n  name: dsh-dstvalid\n  config:\n    profiles: [typescript, generic]\n    compileCommand: node probe.mjs\n    background: false\n`
    const { dir, ws, config } = setup(guarded)
    writeFileSync(join(ws, 'package.json'), '{ "name": "probe", "private": true, "type": "module" }\n')
    mkdirSync(join(ws, 'src'))
    writeFileSync(join(ws, 'src/a.js'), 'export const a = 1\n')
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'))
    const pidFile = join(dir, 'dsh.pid')
    const state = join(dir, 'state')
    mkdirSync(state)
    writeFileSync(join(state, 'seal.key'), 'k'.repeat(32))
    writeFileSync(join(ws, 'probe.mjs'), probeImports + probe(pidFile, join(state, 'seal.key'), join(dir, 'command.json')))
    const test = `${probeImports}import { it } from 'vitest'\n\nit('looks for dsh', () => {\n${probe(pidFile, join(state, 'seal.key'), join(dir, 'vitest.json'))}})\n`
    const secret = `sk-dshtest-${process.pid}-${Date.now()}`
    const script = writeScript(dir, [{ toolCalls: [{ name: 'write_file', arguments: { path: 'tests/probe.test.js', content: test } }] }, { text: 'done' }])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'], {
      env: { OPENAI_API_KEY: secret, DSH_STATE_DIR: state },
      pidFile,
    })
    expect(r.exitCode).toBe(0)
    const events = r.stdout.trim().split('\n').map(l => JSON.parse(l))
    expect(events.find(e => e.type === 'tool/result').data.content).toBe(`created tests/probe.test.js (${Buffer.byteLength(test)} bytes)`)
    // The test ran in the warm runner and passed; the compile command ran too (each wrote what it found).
    const ran = events.filter(e => e.type === 'verify/run').map(e => [e.data.argv.join(' '), e.data.outcome])
    expect(ran).toContainEqual(['vitest related tests/probe.test.js --run (warm)', 'pass'])
    expect(ran).toContainEqual(['node probe.mjs', 'pass'])
    const nothing = { dsh: 'ENOENT', seesDsh: false, withKey: 0, keyStore: false, vault: 'EROFS' }
    expect(JSON.parse(readFileSync(join(dir, 'vitest.json'), 'utf8'))).toEqual(nothing)
    expect(JSON.parse(readFileSync(join(dir, 'command.json'), 'utf8'))).toEqual(nothing)
  }, 120_000)
})

describe('without namespaces', () => {
  it('dsh run says so once, with the reason and what is left open; the setsid\'d process still ends with its call', async () => {
    const { dir, ws, config } = setup()
    const detached = `3000.${process.pid}8`
    const script = writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: `(setsid sleep ${detached} > /dev/null 2>&1 < /dev/null &); echo started` } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo again' } }] },
      { text: 'done' },
    ])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'], { env: { DSH_ISOLATION: 'off' } })
    expect(r.exitCode).toBe(0)
    expect(r.stderr.split('\n').filter(line => line.startsWith('warn'))).toEqual([
      "warn [dsh-tools-workspace] bash commands run without namespaces here (DSH_ISOLATION=off): processes they start are still ended with each call (by an environment marker a process can clear), but they can read the environment of dsh and its parent processes through /proc and read dsh's key store; a change they make to the vault's proof chain or checkpoints is put back after the call. Credential values are still masked in what the model and the session log see.",
    ])
    await vi.waitFor(() => expect(runningExactly(['sleep', detached])).toEqual([]), { timeout: 5000, interval: 50 })
  }, 120_000)
})

describe('processes: nothing a command started outlives its call, nor dsh run', () => {
  it("a setsid'd process that keeps the output open ends with the call; one with its output redirected does not outlive dsh run", async () => {
    const { dir, ws, config } = setup()
    const held = `3000.${process.pid}6`
    const detached = `3000.${process.pid}7`
    const script = writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: `(setsid sleep ${held} &); echo started` } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: `(setsid sleep ${detached} > /dev/null 2>&1 < /dev/null &); echo started` } }] },
      { text: 'done' },
    ])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config, '--json'], { timeoutMs: 50_000 })
    expect(r.exitCode).toBe(0)
    const results = r.stdout.trim().split('\n').map(l => JSON.parse(l)).filter(e => e.type === 'tool/result').map(e => e.data.content)
    expect(results).toEqual(['started\n[exit code 0]', 'started\n[exit code 0]'])
    await vi.waitFor(() => {
      expect(runningExactly(['sleep', held])).toEqual([])
      expect(runningExactly(['sleep', detached])).toEqual([])
    }, { timeout: 5000, interval: 50 })
  }, 120_000)
})

/** The chain rewritten as a forger with dsh's code but not its key would: every outcome "ok", every hash recomputed, the head record too. */
function forgeChain(file: string): void {
  let prevHash = GENESIS
  const rows = readFileSync(file, 'utf8').trim().split('\n').map(line => {
    const { hash: _hash, ...rest } = JSON.parse(line) as ProofEntry
    const entry = sealEntry({ ...rest, outcome: 'ok', prevHash })
    prevHash = entry.hash
    return entry
  })
  writeFileSync(file, rows.map(e => JSON.stringify(e) + '\n').join(''))
  const last = rows.at(-1)!
  writeFileSync(headPath(file), JSON.stringify({ seq: last.seq, hash: last.hash, time: last.time }) + '\n')
}

describe('records: a forged or deleted proof chain is detected', () => {
  const guarded = `${logged}- id: snapshot\n  name: dsh-snapshot\n- id: dstvalid\n  name: dsh-dstvalid\n  config:\n    profiles: [generic]\n    compileCommand: "! grep -q bad a.txt"\n- id: proofchain\n  name: dsh-proofchain\n`

  it('a rolled-back write stays ✗: the agent\'s bash cannot rewrite the chain; one rewritten with recomputed hashes, or deleted, fails dsh proof verify', async () => {
    const { dir, ws, config } = setup(guarded)
    writeFileSync(join(ws, 'a.txt'), 'good\n')
    const chain = join(ws, '.dsh/proofchain.jsonl')
    const script = writeScript(dir, [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'bad\n' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'sed -i s/fail/ok/g .dsh/proofchain.jsonl; rm -f .dsh/proofchain.head.json' } }] },
      { text: 'done' },
    ])
    const r = await dsh(['run', '--workspace', ws, '--script', script, '--config', config])
    expect(r.exitCode).toBe(0)
    expect(readFileSync(chain, 'utf8')).toContain('"outcome":"fail"')
    const verified = await dsh(['proof', 'verify', '--vault', join(ws, '.dsh')])
    expect(verified.exitCode).toBe(0)
    expect(verified.stdout).toMatch(/^ok .*\n {2}sealed by dsh at seq \d+ \(key store .*\)\n$/)

    forgeChain(chain)
    expect(readFileSync(chain, 'utf8')).not.toContain('"outcome":"fail"')
    const forged = await dsh(['proof', 'verify', '--vault', join(ws, '.dsh')])
    expect(forged.exitCode).toBe(1)
    expect(forged.stdout).toMatch(/^FAILED .*\n {2}first bad entry: line \d+ \(seq \d+\): hash mismatch — not the entry dsh sealed: .* \(rewritten, hashes recomputed\)\n/)

    rmSync(chain)
    rmSync(headPath(chain))
    const gone = await dsh(['proof', 'verify', '--vault', join(ws, '.dsh')])
    expect(gone.exitCode).toBe(1)
    expect(gone.stdout).toMatch(/^FAILED .*\n {2}first bad entry: line 1 \(seq 0\): missing entries — the chain file is gone, but dsh sealed seq \d+ \(\w+…\) in it at \S+: it was removed\n/)
    const shown = await dsh(['proof', 'show', '--vault', join(ws, '.dsh')])
    expect(shown.exitCode).toBe(1)
    expect(shown.stderr).toMatch(/^dsh proof: the proof chain at \S+ is gone, though dsh recorded seq \d+ in it \(sealed \S+\): it was removed; run dsh proof verify\n$/)
  }, 240_000) // six real dsh processes: minutes on a loaded machine
})

