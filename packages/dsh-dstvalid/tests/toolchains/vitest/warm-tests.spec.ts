import { writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { resolveFromWorkspace, VitestCheck, vitestCommand, WarmVitestCheck, type CheckIO } from 'dsh-dstvalid'
import { boot, breakDiscount, discountTestFails, expectRolledBack, makeWorkspace, readText, runs, writeFile, type Harness } from '../../helpers.ts'

let h: Harness | undefined
afterEach(async () => { await h?.dispose(); h = undefined })

/** The workspace's warm test check, as the harness built it. */
function warmCheck(harness: Harness): WarmVitestCheck {
  const check = harness.ctx.dstvalid.guardFor(harness.root).checks.find(c => c.name === 'test')
  if (!(check instanceof WarmVitestCheck)) throw new Error('the test check is not the warm runner')
  return check
}

/** Whether any process of a process group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    // ESRCH: the whole group is gone.
    return false
  }
}

/** Waits until `what()` holds: no budget of its own (a loaded machine is slow, not wrong); the test's timeout ends a wait that never ends. */
async function until(what: () => boolean): Promise<void> {
  while (!what()) await new Promise(r => setTimeout(r, 50))
}

/** Kills the process running it (the warm runner, under --pool=threads) once, when `.crash-armed` exists. */
const crashTest = `import { existsSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { add } from '../src/money.ts'

const armed = fileURLToPath(new URL('../.crash-armed', import.meta.url))

it('adds again', () => {
  if (existsSync(armed)) {
    rmSync(armed)
    process.kill(process.pid, 'SIGKILL')
  }
  expect(add(1, 2)).toBe(3)
})
`

describe('warm test runner (the workspace\'s vitest through its Node API)', () => {
  it('judges like the CLI: a broken behaviour and a broken test-file parse are rolled back, a flaky failure is kept', async () => {
    const root = makeWorkspace()
    h = await boot(root, { tsconfig: 'tsconfig.full.json' })
    await h.ready()

    await expectRolledBack(h, 'edit_file', breakDiscount, 'rolled back: test failed after edit_file on src/money.ts', discountTestFails)
    // Baseline, the related run, the failing test alone — all in the warm runner; no re-check after the
    // rollback (the file is back byte for byte).
    expect(runs(h.session).filter(x => x.check === 'test').map(x => [x.argv.join(' '), x.outcome])).toEqual([
      ['vitest run (warm)', 'pass'],
      ['vitest related src/money.ts --run (warm)', 'fail'],
      ['vitest run tests/money.test.ts -t ^(money applies a percentage discount)$ (warm)', 'fail'],
    ])

    // A test file that no longer parses: its type errors are only warnings (a test file), but its tests stop loading — the write's.
    const testBefore = readText(root, 'tests/money.test.ts')
    const unparsable = await h.exec('edit_file', { path: 'tests/money.test.ts', old_string: "describe('money', () => {", new_string: "describe('money', () => {{" })
    expect(unparsable.isError).toBe(true)
    expect(unparsable.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on tests/money.test.ts')
    expect(unparsable.content.split('\n')[1]).toMatch(/^tests\/money\.test\.ts FAIL test file failed: /)
    expect(readText(root, 'tests/money.test.ts')).toBe(testBefore)

    // Flaky: fails once, passes alone — kept; the runner was not restarted for it.
    writeFileSync(join(root, '.flaky-armed'), '')
    const comment = await h.exec('edit_file', { path: 'src/greeting.ts', old_string: 'export function greet', new_string: '/** Greets. */\nexport function greet' })
    expect(comment).toEqual({ content: 'edited src/greeting.ts' })
    expect(h.notices.map(n => n.text)).toContain('1 failure did not repeat (flaky); not blamed on the write')
    expect(warmCheck(h).starts).toBe(1)
  }, 180_000)

  it('restarted after a crash (mid-run: that run is judged by the CLI) and after a config change; disposal kills its process group', async () => {
    const root = makeWorkspace('shop', { 'tests/crash.test.ts': crashTest })
    h = await boot(root, { tsconfig: 'tsconfig.full.json', warmOnStart: true })
    const check = warmCheck(h)
    await until(() => check.pid !== undefined)
    await h.ready()
    const first = check.pid!

    // Killed between runs: the next write starts a new runner and is judged by it.
    process.kill(-first, 'SIGKILL')
    await until(() => !groupAlive(first))
    const broken = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.ceil(amount * (1 - percent / 100))' })
    expect(broken.content.split('\n')[0]).toBe('rolled back: test failed after edit_file on src/money.ts')
    expect(check.starts).toBe(2)
    expect(runs(h.session).filter(x => x.check === 'test').every(x => x.argv.at(-1) === '(warm)')).toBe(true)

    // Dies in the middle of a run (a test kills the runner once): this write is judged by the CLI, the next by a new runner.
    writeFileSync(join(root, '.crash-armed'), '')
    const good = await h.exec('edit_file', { path: 'src/money.ts', old_string: 'export function add', new_string: '/** Adds. */\nexport function add' })
    expect(good).toEqual({ content: 'edited src/money.ts' })
    expect(h.notices.map(n => n.text).filter(t => t.startsWith('warm test runner failed'))).toHaveLength(1)
    expect(h.notices.map(n => n.text).find(t => t.startsWith('warm test runner failed'))).toMatch(/^warm test runner failed \(warm vitest exited \(SIGKILL\).*\); this run uses the vitest CLI, the next one restarts it$/)
    const last = runs(h.session).filter(x => x.check === 'test').slice(-2)
    expect(last.map(x => [x.argv.at(-1) === '(warm)', x.outcome])).toEqual([[true, 'error'], [false, 'pass']])
    expect(last[1]!.argv.slice(2)).toContain('related')
    const again = await h.exec('edit_file', { path: 'src/money.ts', old_string: '/** Adds. */', new_string: '/** Adds cents. */' })
    expect(again).toEqual({ content: 'edited src/money.ts' })
    expect(check.starts).toBe(3)
    expect(runs(h.session).filter(x => x.check === 'test').at(-1)!.argv.join(' ')).toBe('vitest related src/money.ts --run (warm)')

    // A config change restarts the runner, and every test runs (vitest's own rule for its config files).
    const beforeConfig = check.pid!
    // (It excludes no test file: one whose tests passed and no longer run would roll the write back.)
    const config = await h.exec('write_file', { path: 'vitest.config.mjs', content: 'export default { test: { testTimeout: 20000 } }\n' })
    expect(config.isError).toBeFalsy()
    expect(h.notices.map(n => n.text)).toContain('vitest.config.mjs changed: restarting the warm test runner')
    expect(check.starts).toBe(4)
    // Its group was sent SIGKILL: the old runner's workers are gone once the signal has landed.
    await until(() => !groupAlive(beforeConfig))
    expect(runs(h.session).filter(x => x.check === 'test').at(-1)!.argv.join(' ')).toBe('vitest run (warm)')

    // Disposing the plugin releases the runner: its whole process group goes.
    const pid = check.pid!
    await h.dispose()
    h = undefined
    await until(() => !groupAlive(pid))
  }, 180_000)

  it('reads a file changed behind its back again; recycles past its memory bound; falls back to the CLI for a vitest whose Node API differs', async () => {
    const root = makeWorkspace()
    const command = vitestCommand(root)!
    const notices: string[] = []
    const io: CheckIO = { record: () => {}, notice: (_, text) => { notices.push(text) }, timeoutMs: 120_000, maxOutputBytes: 1 << 20 }
    const cli = new VitestCheck({ root, command, mode: 'related', extraArgs: ['--pool=threads'] })

    // A file changed behind the runner's back (put back by someone else, not announced) is read again: found by its stamp.
    const quiet = new WarmVitestCheck({ root, vitestNode: resolveFromWorkspace(root, 'vitest/node')!, mode: 'related', extraArgs: ['--pool=threads'], cli, maxRssMb: 0 })
    try {
      const money = readText(root, 'src/money.ts')
      writeFile(root, 'src/money.ts', money.replace('return a + b', 'return a - b'))
      const bad = await quiet.measure({ paths: [join(root, 'src/money.ts')], files: ['src/money.ts'] }, io)
      expect(bad.problems.map(p => p.key).sort()).toEqual(['tests/cart.test.ts > cart > applies the discount to the subtotal', 'tests/cart.test.ts > cart > sums line prices times quantities', 'tests/money.test.ts > money > adds cents'])
      writeFile(root, 'src/money.ts', money)
      const other = await quiet.measure({ paths: [join(root, 'src/cart.ts')], files: ['src/cart.ts'] }, io)
      expect(other.scope).toEqual(['src/cart.ts', 'tests/cart.test.ts'])
      expect(other.problems).toEqual([])
      expect(quiet.starts).toBe(1)
    } finally {
      await quiet.dispose()
    }

    const bounded = new WarmVitestCheck({ root, vitestNode: resolveFromWorkspace(root, 'vitest/node')!, mode: 'related', extraArgs: ['--pool=threads'], cli, maxRssMb: 1 })
    try {
      const m = await bounded.measure({ paths: [join(root, 'src/money.ts')], files: ['src/money.ts'] }, io)
      expect(m.status).toBe('ok')
      expect(m.scope).toEqual(['src/money.ts', 'tests/cart.test.ts', 'tests/money.test.ts'])
      expect(bounded.lastRssKb).toBeGreaterThan(1024)
      expect(notices.at(-1)).toMatch(/^warm test runner uses \d+ MB \(bound 1 MB\): recycling it$/)
      await until(() => bounded.starts === 2)
    } finally {
      await bounded.dispose()
    }

    // A `vitest/node` without the API the runner speaks (an older or newer vitest).
    writeFile(root, 'old-vitest-node.mjs', 'export const version = "0.34.0"\n')
    const old = new WarmVitestCheck({ root, vitestNode: join(root, 'old-vitest-node.mjs'), mode: 'related', cli, maxRssMb: 0 })
    try {
      const m = await old.measure({ paths: [join(root, 'src/money.ts')], files: ['src/money.ts'] }, io)
      expect(notices.at(-1)).toBe('warm test runner not available (vitest/node has no createVitest); using the vitest CLI')
      expect(m.status).toBe('ok')
      expect(m.scope).toEqual(['src/money.ts', 'tests/cart.test.ts', 'tests/money.test.ts'])
      expect(old.unsupported).toBe('vitest/node has no createVitest')
      expect(old.pid).toBeUndefined()
    } finally {
      await old.dispose()
    }
  }, 180_000)

  /** A test file that passes only while its partner runs at the same time (each waits up to 20 s for the other's mark). */
  const meets = (me: string, other: string) => `import { existsSync, writeFileSync } from 'node:fs'
import { expect, it } from 'vitest'

it('meets ${other}', async () => {
  writeFileSync('.met-${me}', '')
  const until = Date.now() + 20_000
  while (!existsSync('.met-${other}') && Date.now() < until) await new Promise(r => setTimeout(r, 20))
  expect(existsSync('.met-${other}')).toBe(true)
})
`
  /** A test file that fails when another file holds the workspace's \`.busy\` mark while it runs. */
  const alone = `import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { expect, it } from 'vitest'

it('runs alone', async () => {
  expect(existsSync('.busy')).toBe(false)
  writeFileSync('.busy', '')
  await new Promise(r => setTimeout(r, 1500))
  expect(existsSync('.busy')).toBe(true)
  rmSync('.busy')
})
`

  // Skipped on a 1-core machine only: there "every core" is one worker, and the two files that must meet cannot.
  it.skipIf(availableParallelism() < 2)('runs test files on every core, unless the workspace limits how many run at once', async () => {
    const io: CheckIO = { record: () => {}, notice: () => {}, timeoutMs: 120_000, maxOutputBytes: 1 << 20 }
    /** The whole suite of `root` in a warm runner: nothing fails, and exactly `keys` pass. */
    const passesWhole = async (root: string, keys: string[]) => {
      const check = new WarmVitestCheck({ root, vitestNode: resolveFromWorkspace(root, 'vitest/node')!, mode: 'related', cli: new VitestCheck({ root, command: vitestCommand(root)!, mode: 'related' }), maxRssMb: 0 })
      try {
        const m = await check.measure(undefined, io)
        expect(m.problems).toEqual([])
        expect(m.passed?.map(p => p.key).sort()).toEqual(keys)
      } finally {
        await check.dispose()
      }
    }
    const pkg = '{ "name": "fixture-cores", "private": true, "type": "module" }\n'

    // Two files that pass only together: vitest's default here would be one worker (one core left to its main process).
    await passesWhole(makeWorkspace('', { 'package.json': pkg, 'tests/a.test.ts': meets('a', 'b'), 'tests/b.test.ts': meets('b', 'a') }), ['tests/a.test.ts > meets b', 'tests/b.test.ts > meets a'])

    // \`fileParallelism: false\`: one file at a time, as the workspace says.
    await passesWhole(makeWorkspace('', {
      'package.json': pkg,
      'vitest.config.ts': "import { defineConfig } from 'vitest/config'\nexport default defineConfig({ test: { fileParallelism: false } })\n",
      'tests/a.test.ts': alone,
      'tests/b.test.ts': alone,
    }), ['tests/a.test.ts > runs alone', 'tests/b.test.ts > runs alone'])
  }, 120_000)
})
