import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { acquireFileLock, currentProcess, LockTimeoutError, processState, runCommand, withFileLock } from 'dsh-common'

const dirs: string[] = []
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })
function lockPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-lock-'))
  dirs.push(dir)
  return join(dir, 'x.lock')
}
const root = fileURLToPath(new URL('../../..', import.meta.url))

describe('file lock', () => {
  it('breaks a lock whose pid now belongs to another process (pid reuse), without waiting for staleness', async () => {
    const path = lockPath()
    // A live pid on this host and boot, but started at another time: the holder is gone, its pid reused.
    const { start: _ours, ...me } = currentProcess()
    const parent = { ...me, pid: process.ppid }
    expect(processState(parent)).toBe('alive')
    writeFileSync(path, JSON.stringify({ ...parent, start: '1', time: Date.now(), token: 'reused' }))
    const lock = await acquireFileLock(path, { staleMs: 60_000, timeoutMs: 2_000 })
    expect(lock.owner.token).not.toBe('reused')
    expect(lock.owner.start).toBe(currentProcess().start)
    lock.release()
  })

  it('lets one holder in at a time', async () => {
    const path = lockPath()
    let inside = 0
    let most = 0
    const order: number[] = []
    await Promise.all(Array.from({ length: 12 }, (_, i) => withFileLock(path, async () => {
      inside++
      most = Math.max(most, inside)
      await new Promise(r => setTimeout(r, 1))
      order.push(i)
      inside--
    })))
    expect(most).toBe(1)
    expect(order.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i))
    expect(existsSync(path)).toBe(false)
  })

  it('breaks a lock whose holder was killed while holding it', async () => {
    const path = lockPath()
    const script = `import { acquireFileLock } from 'dsh-common'; await acquireFileLock(${JSON.stringify(path)}); process.kill(process.pid, 'SIGKILL')`
    const killed = await runCommand(['node', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, timeoutMs: 30_000 })
    expect(killed.signal).toBe('SIGKILL')
    expect(existsSync(path)).toBe(true)
    // Staleness cannot break it within the timeout: only the dead holder's liveness can.
    const lock = await acquireFileLock(path, { timeoutMs: 2_000, staleMs: 60_000 })
    expect(lock.owner.pid).toBe(process.pid)
    lock.release()
    expect(readdirSync(join(path, '..'))).toEqual([])
  })

  it('breaks a lock older than staleMs even when its holder lives', async () => {
    const path = lockPath()
    writeFileSync(path, JSON.stringify({ pid: process.pid, host: hostname(), time: 0, token: 'old' }))
    const past = new Date(Date.now() - 60_000)
    utimesSync(path, past, past)
    const lock = await acquireFileLock(path, { staleMs: 5_000, timeoutMs: 1_000 })
    expect(lock.owner.token).not.toBe('old')
    lock.release()
  })

  it('times out on a live, fresh lock with an error naming its holder', async () => {
    const path = lockPath()
    const held = await acquireFileLock(path)
    const error = await acquireFileLock(path, { timeoutMs: 60 }).catch(e => e)
    expect(error).toBeInstanceOf(LockTimeoutError)
    expect(error.code).toBe('LOCK_TIMEOUT')
    expect(error.message).toMatch(new RegExp(`^could not lock ${path} within \\d+ ms \\(held by pid ${process.pid} on `))
    held.release()
    held.release()
    expect(existsSync(path)).toBe(false)
  })

  it('a release after the lock was broken leaves the new holder alone', async () => {
    const path = lockPath()
    const first = await acquireFileLock(path)
    const past = new Date(Date.now() - 60_000)
    utimesSync(path, past, past)
    const second = await acquireFileLock(path, { staleMs: 1_000 })
    first.release()
    expect(existsSync(path)).toBe(true)
    second.release()
    expect(existsSync(path)).toBe(false)
  })
})

describe('a killed holder its parent has not reaped', () => {
  it('is dead (a zombie holds nothing), and its lock is broken at once', async () => {
    // sh starts a child, kills it, then becomes `sleep`, which never reaps it: a zombie while it sleeps.
    const { spawn } = await import('node:child_process')
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; kill -9 $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] })
    const pid = await new Promise<number>(resolve => parent.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))))
    try {
      const { readFileSync } = await import('node:fs')
      for (let i = 0; i < 100 && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); i++) await new Promise(r => setTimeout(r, 20))
      expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z /)
      expect(processState({ pid, host: hostname() })).toBe('dead')
      const path = lockPath()
      writeFileSync(path, JSON.stringify({ pid, host: hostname(), time: Date.now(), token: 'zombie' }))
      const lock = await acquireFileLock(path, { staleMs: Number.MAX_SAFE_INTEGER, timeoutMs: 1000 })
      expect(lock.owner.pid).toBe(process.pid)
      lock.release()
    } finally {
      parent.kill('SIGKILL')
    }
  })
})
