import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { noteLeftover } from './leftovers.ts'

/** A real small filesystem (tmpfs) a test can fill up. */
export interface SmallDisk {
  /** Its mount point (a real path). */
  dir: string
  /** Write a filler file until the disk has no free block left (ENOSPC). */
  fill(): void
  /** Remove the filler: the disk has room again. */
  free(): void
}

const mounted: string[] = []

function unmountAll(): void {
  for (const dir of mounted.splice(0)) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // Left for the OS: a temp dir that could not be unmounted.
    }
  }
}

/** Write `chunk` until the disk refuses (a short write means the next one fails). */
function writeUntilFull(fd: number, chunk: Buffer): void {
  for (;;) {
    try {
      writeSync(fd, chunk)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return
      throw error
    }
  }
}

/**
 * Mount a tmpfs of `size` (`mount -t tmpfs -o size=…`: needs root, or
 * CAP_SYS_ADMIN) under the OS temp dir, unmounted when the test worker
 * exits (or at the end of the run, see leftovers.ts). Returns why not when mounting is impossible here, for the spec to
 * skip with that message.
 */
export function smallDisk(size = '1m'): SmallDisk | { unavailable: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-small-disk-')))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim()
    return { unavailable: `cannot mount a tmpfs (${stderr || (error as Error).message}); run as root to test a full disk` }
  }
  if (!mounted.length) process.once('exit', unmountAll)
  mounted.push(dir)
  noteLeftover(dir, 'mount')
  const filler = join(dir, '.filler')
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a')
      try {
        writeUntilFull(fd, Buffer.alloc(64 * 1024))
        writeUntilFull(fd, Buffer.alloc(1))
      } finally {
        closeSync(fd)
      }
    },
    free() {
      rmSync(filler, { force: true })
    },
  }
}
