import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'

/**
 * What a test run leaves in the OS temp dir, cleaned up at its end. Test
 * workers end without Node's `exit` event when the pool stops them, so the
 * `exit` hooks of {@link tempDir} and {@link smallDisk} do not always run:
 * the runs of a session left gigabytes of directories and mounted tmpfs
 * behind. Each is also noted in the run's register (a directory named by
 * `DSH_TEST_LEFTOVERS`, set by the run's global set-up before any worker
 * starts), and the global teardown removes what is noted there.
 */
const ENV = 'DSH_TEST_LEFTOVERS'

/** Note `path` in the run's register (`mount`: a mount point, unmounted first); nothing outside a registered run. */
export function noteLeftover(path: string, kind: 'dir' | 'mount' = 'dir'): void {
  const register = process.env[ENV]
  if (!register) return
  try {
    appendFileSync(join(register, `${process.pid}.${kind}`), `${path}\n`)
  } catch {
    // The register is gone (the run is ending): the worker's own exit hook is all there is.
  }
}

/** Remove what the register names (mounts unmounted first), then the register. */
function removeNoted(register: string): void {
  let files: string[]
  try {
    files = readdirSync(register)
  } catch {
    return
  }
  const noted = (kind: string) => files.filter(f => f.endsWith(`.${kind}`)).flatMap(f => readFileSync(join(register, f), 'utf8').split('\n').filter(Boolean))
  for (const dir of noted('mount')) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
    } catch {
      // Already unmounted by the worker.
    }
  }
  for (const path of [...noted('mount'), ...noted('dir')]) rmSync(path, { recursive: true, force: true, maxRetries: 3 })
  rmSync(register, { recursive: true, force: true })
}

/**
 * vitest global set-up (`globalSetup` in the root config): opens the
 * run's register and returns the teardown that empties it.
 */
export default function setup(): () => void {
  const register = mkdtempSync(join(tmpdir(), 'dsh-test-leftovers-'))
  process.env[ENV] = register
  return () => removeNoted(register)
}
