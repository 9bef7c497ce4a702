import { describe, expect, it, onTestFinished } from 'vitest'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { formatRecovery, listJournals, readJournal, recoverVault, Snapshots } from 'dsh-snapshot'
import { content } from './fixtures/crash-plan.ts'
import { deadOwner, workspace } from './helpers.ts'

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const DSH = join(REPO, 'packages/dsh-cli/bin/dsh.mjs')

function dsh(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise(done => {
    const child = spawn(process.execPath, [DSH, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d })
    child.stderr.on('data', (d: Buffer) => { stderr += d })
    child.on('exit', code => done({ code, stdout, stderr }))
  })
}

const BYTES = 200 * 1024

/** Wait for a condition the child process brings about (checked every 20 ms). */
async function until(done: () => boolean) {
  while (!done()) await new Promise(r => setTimeout(r, 20))
}

/** A real `dsh run` writing a.txt and d/b.txt 45 times (200 KB each), SIGKILLed after its third write of a.txt. */
async function killMidWrite(): Promise<string> {
  const root = workspace({ 'a.txt': content('a', 0, BYTES) })
  const script = join(workspace(), 'script.jsonl')
  writeFileSync(script, Array.from({ length: 45 }, (_, x) => JSON.stringify({
    toolCalls: [
      { name: 'write_file', arguments: { path: 'a.txt', content: content('a', x + 1, BYTES) } },
      { name: 'write_file', arguments: { path: 'd/b.txt', content: content('b', x + 1, BYTES) } },
    ],
  })).join('\n') + '\n')
  const child = spawn(process.execPath, [DSH, 'run', '--workspace', root, '--script', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  let seen = 0
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d })
  const exited = new Promise<string>(done => child.on('exit', (code, signal) => done(signal ?? `exit ${code}`)))
  await new Promise<void>((enough, fail) => {
    child.stdout.on('data', (d: Buffer) => {
      seen += d.toString().split('wrote a.txt').length - 1
      if (seen >= 3) enough()
    })
    child.on('exit', () => fail(new Error(`dsh run ended before the kill: ${stderr}`)))
  })
  await new Promise(r => setTimeout(r, Math.floor(Math.random() * 60)))
  child.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
  expect(listJournals(join(root, '.dsh'))).toHaveLength(1)
  return root
}

/** Every file of a killed run's workspace is wholly one of its versions, and no temp file is left. */
function expectWhole(root: string) {
  const versions = Array.from({ length: 46 }, (_, v) => v)
  const a = readFileSync(join(root, 'a.txt'), 'utf8')
  expect(versions.some(v => a === content('a', v, BYTES)), 'a.txt is wholly one version').toBe(true)
  if (existsSync(join(root, 'd/b.txt'))) {
    const b = readFileSync(join(root, 'd/b.txt'), 'utf8')
    expect(versions.some(v => b === content('b', v, BYTES)), 'd/b.txt is wholly one version').toBe(true)
  }
  for (const dir of [root, join(root, 'd')]) {
    if (existsSync(dir)) expect(readdirSync(dir).filter(n => n.endsWith('.tmp'))).toEqual([])
  }
}

describe('dsh recover', () => {
  it('resolves the journal of a dsh run killed mid-write: every file wholly one version', async () => {
    const root = await killMidWrite()

    const first = await dsh(['recover', '--workspace', root])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^[^\n]+\.journal \(session [^,]+, pid \d+\):\n/)
    expect(first.stdout.endsWith('  journal removed\n')).toBe(true)
    expect(listJournals(join(root, '.dsh'))).toEqual([])
    expectWhole(root)

    const again = await dsh(['recover', '--workspace', root])
    expect(again).toEqual({ code: 0, stdout: `nothing to recover in ${join(root, '.dsh', 'snapshots')}\n`, stderr: '' })
  }, 60_000)

  it('the journal of a killed dsh run, cut at several offsets inside its last record\'s line: kept, exit 1, nothing unproven restored, what was found and what to do said; --restore-unproven then resolves it', async () => {
    // A shell call that changed a.txt and is still running when dsh run is killed: its scope is open in the journal.
    const root = workspace({ 'a.txt': 'old\n', 'keep.txt': 'k\n' })
    const outside = workspace()
    const script = join(outside, 'script.jsonl')
    // The command waits for the test to release it (at most 60 s): killing dsh run does not end it.
    const release = join(outside, 'release')
    onTestFinished(() => writeFileSync(release, ''))
    const command = `printf new > a.txt && touch started && for i in $(seq 600); do [ -e ${release} ] && break; sleep 0.1; done`
    writeFileSync(script, `${JSON.stringify({ toolCalls: [{ name: 'bash', arguments: { command } }] })}\n`)
    const child = spawn(process.execPath, [DSH, 'run', '--workspace', root, '--script', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<string>(done => child.on('exit', (code, signal) => done(signal ?? `exit ${code}`)))
    await until(() => existsSync(join(root, 'started')))
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    const [file] = listJournals(join(root, '.dsh'))
    const journal = readFileSync(file!)
    const parsed = readJournal(file!)
    const last = parsed.records.at(-1)!
    // The last record's line: up to the newline before its captured bytes, or before the end of the records.
    const newline = last.payloadOffset !== undefined ? last.payloadOffset - 1 : parsed.end - 1
    const start = journal.lastIndexOf(0x0a, newline - 1) + 1
    const line = journal.subarray(start, newline).toString('utf8')
    const open = parsed.records.find(r => r.record.t === 'open')!.record
    const callId = open.t === 'open' ? open.callIds[0] : ''
    const real = realpathSync(root)
    for (const keep of [1, 9, Math.floor(line.length / 2), line.length - 1]) {
      writeFileSync(file!, journal.subarray(0, start + keep))
      // What `dsh recover` prints, in process (a node start-up per offset is seconds); the last cut through the command itself.
      const r = keep === line.length - 1
        ? await dsh(['recover', '--workspace', root])
        : await recoverVault(join(root, '.dsh'), { workspace: root }).then(report => ({ code: report.journals.some(j => !j.removed) ? 1 : 0, stdout: formatRecovery(report) }))
      const type = /^\{"t":"(\w+)"/.exec(line.slice(0, keep))?.[1]
      const what = `the last record (${type ? `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} record` : 'cut before its type'}, ${keep} byte${keep === 1 ? '' : 's'} at byte ${start}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end)`
      expect({ code: r.code, lines: r.stdout.split('\n').slice(1) }, `cut after ${keep} bytes`).toEqual({
        code: 1,
        lines: [
          `  not restored call ${callId} (no verdict that can be read)`,
          `  ${what}; how call ${callId} ended cannot be proven, so nothing of it was restored. The journal is kept: check the workspace (e.g. git status), then run dsh recover --workspace ${real} --restore-unproven to put back what the readable records captured, or delete ${file} to keep the files as they are`,
          '',
        ],
      })
      // Nothing unproven was restored, the journal is byte for byte what was found.
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('new')
      expect(readFileSync(file!).equals(journal.subarray(0, start + keep))).toBe(true)
    }
    // Asked to, it resolves what the readable records show — here nothing: the cut took the call's only capture, and it says so.
    const resolved = await dsh(['recover', '--workspace', root, '--restore-unproven'])
    expect({ code: resolved.code, lines: resolved.stdout.split('\n').slice(1) }).toEqual({
      code: 0,
      lines: [
        `  the last record (a cap record, ${line.length - 1} bytes at byte ${start}) was cut short before its end: what it recorded is lost (a verdict, a capture, a rollback's end); resolved from the records before it, as asked (--restore-unproven)`,
        `  rolled back call ${callId} (no verdict): nothing to restore in the records before the cut`,
        '  journal removed',
        '',
      ],
    })
    expect(listJournals(join(root, '.dsh'))).toEqual([])
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('new')
  }, 90_000)

  it('a moved workspace: exit 1, the journal kept, and what to do', async () => {
    const root = workspace({ 'a.txt': 'old' })
    new Snapshots({ root, vault: join(root, '.dsh'), sessionId: 'm', fsync: 'off' }, deadOwner()).capture({ key: 'call:c1', callId: 'c1' }, ['a.txt'])
    writeFileSync(join(root, 'a.txt'), 'new')
    const moved = `${root}-moved`
    renameSync(root, moved)
    const [file] = listJournals(join(moved, '.dsh'))
    const r = await dsh(['recover', '--workspace', moved])
    expect(r.stdout.split('\n').slice(1)).toEqual([
      `  workspace ${root} no longer exists (moved or deleted?); journal kept: move the workspace back to ${root} and run dsh recover --workspace ${root} again, or delete ${file} if none of its writes matter any more`,
      '',
    ])
    expect(r.code).toBe(1)
    expect(listJournals(join(moved, '.dsh'))).toEqual([file])
  }, 60_000)

  it('bad usage exits 2 with one line', async () => {
    expect(await dsh(['recover'])).toEqual({ code: 2, stdout: '', stderr: 'dsh recover: --workspace DIR is required (see dsh recover --help)\n' })
    const missing = join(workspace(), 'nope')
    expect(await dsh(['recover', '--workspace', missing])).toEqual({ code: 2, stdout: '', stderr: `dsh recover: workspace ${missing} does not exist\n` })
  }, 30_000)
})
