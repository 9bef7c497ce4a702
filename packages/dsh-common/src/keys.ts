import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { writeFileAtomicSync } from './fs.ts'

/**
 * dsh's own state outside every workspace: the key that seals the vaults'
 * records and the seals themselves. `$DSH_STATE_DIR`, else
 * `$XDG_STATE_HOME/dsh`, else `~/.local/state/dsh`. Owner-only (0700);
 * the bash tool's sandbox hides it from commands.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DSH_STATE_DIR) return resolve(env.DSH_STATE_DIR)
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), 'dsh')
  return join(homedir(), '.local', 'state', 'dsh')
}

function ensureOwnerOnlyDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700)
}

/**
 * The sealing key (32 random bytes in `<stateDir>/seal.key`, mode 0600),
 * created on first use.
 */
export function sealKey(dir: string = stateDir()): Buffer {
  const file = join(dir, 'seal.key')
  try {
    const key = readFileSync(file)
    if (key.length >= 32) return key
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  ensureOwnerOnlyDir(dir)
  try {
    writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return readFileSync(file)
}

/** A record kept outside the vault, with its MAC over `what` and every field. */
export interface Seal {
  /** What is sealed, e.g. the proof chain's real path. */
  what: string
  fields: Record<string, string | number>
  mac: string
}

function macOf(key: Buffer, what: string, fields: Record<string, string | number>): string {
  const body = JSON.stringify([what, Object.keys(fields).sort().map(k => [k, fields[k]])])
  return createHmac('sha256', key).update(body).digest('hex')
}

function sealFile(dir: string, what: string): string {
  return join(dir, 'seals', `${createHash('sha256').update(what).digest('hex').slice(0, 32)}.json`)
}

/** Write the seal of `what` (atomically; owner-only). */
export function writeSeal(what: string, fields: Record<string, string | number>, dir: string = stateDir()): void {
  const key = sealKey(dir)
  ensureOwnerOnlyDir(join(dir, 'seals'))
  const seal: Seal = { what, fields, mac: macOf(key, what, fields) }
  writeFileAtomicSync(sealFile(dir, what), JSON.stringify(seal) + '\n', { mode: 0o600 })
}

/**
 * The seal of `what`: its fields when the MAC verifies with this machine's
 * key; `'forged'` when a seal is there but its MAC does not verify;
 * undefined when there is none (never sealed here, or moved).
 */
export function readSeal(what: string, dir: string = stateDir()): Record<string, string | number> | 'forged' | undefined {
  let text: string
  try {
    text = readFileSync(sealFile(dir, what), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  let key: Buffer
  try {
    key = readFileSync(join(dir, 'seal.key'))
  } catch {
    // A seal without the key that made it cannot be trusted.
    return 'forged'
  }
  try {
    const seal = JSON.parse(text) as Seal
    const expected = Buffer.from(macOf(key, what, seal.fields), 'hex')
    const given = Buffer.from(String(seal.mac), 'hex')
    if (seal.what === what && given.length === expected.length && timingSafeEqual(given, expected)) return seal.fields
  } catch {
    // Falls through: an unreadable seal is not a seal.
  }
  return 'forged'
}
