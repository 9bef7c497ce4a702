import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from 'dsh-testkit'

const repo = join(import.meta.dirname, '..', '..', '..')
const setup = join(repo, 'packages/dsh-testkit/src/leftovers.ts')

describe('what a test run leaves in the temp dir', () => {
  it('is removed at the end of the run, though the pool stops its workers without an exit event (their own hooks never run); a tmpfs is unmounted first', () => {
    const dir = tempDir('dsh-leftovers-spec-')
    const out = join(dir, 'made.json')
    // A test file that makes a temp dir and a small disk and notes where; it passes, and its worker is stopped as every one is.
    writeFileSync(join(dir, 'makes.spec.ts'), [
      "import { writeFileSync } from 'node:fs'",
      "import { it } from 'vitest'",
      `import { smallDisk, tempDir } from ${JSON.stringify(join(repo, 'packages/dsh-testkit/src/index.ts'))}`,
      "it('makes', () => {",
      "  const disk = smallDisk('1m')",
      `  writeFileSync(${JSON.stringify(out)}, JSON.stringify({ dir: tempDir('dsh-leftovers-made-'), disk: 'dir' in disk ? disk.dir : null }))`,
      '})',
      '',
    ].join('\n'))
    writeFileSync(join(dir, 'vitest.config.mjs'), `export default { test: { globalSetup: [${JSON.stringify(setup)}], pool: 'forks', include: ['makes.spec.ts'] } }\n`)
    const r = spawnSync(join(repo, 'node_modules/.bin/vitest'), ['run', '--root', dir], { cwd: repo, encoding: 'utf8', env: { ...process.env, DSH_TEST_LEFTOVERS: '' } })
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const made = JSON.parse(readFileSync(out, 'utf8')) as { dir: string; disk: string | null }
    expect(existsSync(made.dir)).toBe(false)
    if (made.disk) {
      expect(existsSync(made.disk)).toBe(false)
      expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(made.disk)
    }
  }, 120_000)
})
