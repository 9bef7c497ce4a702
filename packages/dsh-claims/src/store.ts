import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ensureVault, readdirOrEmpty, writeFileAtomic } from 'dsh-common'
import type { StoredCheckpoint } from './types.ts'

/** A session id as a file name: kept when it is already safe, else made safe with a hash suffix. */
export function sessionFileName(sessionId: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(sessionId)) return sessionId
  const safe = sessionId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._-]+/, '').slice(0, 80)
  return `${safe || 'session'}-${createHash('sha256').update(sessionId).digest('hex').slice(0, 8)}`
}

/** `<vault>/checkpoints` */
export function checkpointsDir(vault: string): string {
  return join(vault, 'checkpoints')
}

/** `<vault>/checkpoints/<session>.json` */
export function checkpointPath(vault: string, sessionId: string): string {
  return join(checkpointsDir(vault), `${sessionFileName(sessionId)}.json`)
}

/** Write a session's checkpoint atomically (temp file, fsync, rename); returns the path. */
export async function writeCheckpoint(vault: string, stored: StoredCheckpoint): Promise<string> {
  const file = checkpointPath(vault, stored.sessionId)
  ensureVault(vault)
  await mkdir(checkpointsDir(vault), { recursive: true })
  await writeFileAtomic(file, JSON.stringify(stored, null, 2) + '\n', { fsync: true })
  return file
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(s => typeof s === 'string')
}

/** Parse a checkpoint file's text; `undefined` when it is not one (wrong shape or version). */
export function parseCheckpoint(text: string): StoredCheckpoint | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // SyntaxError: not JSON, so not a checkpoint.
    return undefined
  }
  const c = value as Partial<StoredCheckpoint> | null
  if (!c || c.version !== 1 || typeof c.sessionId !== 'string' || typeof c.summary !== 'string' || typeof c.time !== 'number') return undefined
  if (!isStringArray(c.verified) || !isStringArray(c.failed) || !isStringArray(c.next) || !c.report || typeof c.report !== 'object') return undefined
  return c as StoredCheckpoint
}

export interface StoredEntry {
  file: string
  checkpoint: StoredCheckpoint
}

/**
 * Every readable checkpoint in the vault, oldest first. Unreadable files are
 * skipped and reported through `onSkip`; a missing directory is an empty vault.
 */
export function listCheckpoints(vault: string, onSkip?: (file: string, why: string) => void): StoredEntry[] {
  const dir = checkpointsDir(vault)
  const names = readdirOrEmpty(dir)
  const entries: StoredEntry[] = []
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue
    const file = join(dir, name)
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      onSkip?.(file, (error as NodeJS.ErrnoException).code ?? String(error))
      continue
    }
    const checkpoint = parseCheckpoint(text)
    if (checkpoint) entries.push({ file, checkpoint })
    else onSkip?.(file, 'not a checkpoint file')
  }
  return entries.sort((a, b) => a.checkpoint.time - b.checkpoint.time || a.checkpoint.seq - b.checkpoint.seq)
}

export interface LatestOptions {
  /** Skip this session's own checkpoint. */
  excludeSession?: string
  /** Only checkpoints written on this workspace root. */
  cwd?: string
  onSkip?: (file: string, why: string) => void
}

/** The newest checkpoint in the vault matching the options. */
export function latestCheckpoint(vault: string, options: LatestOptions = {}): StoredCheckpoint | undefined {
  const entries = listCheckpoints(vault, options.onSkip).filter(({ checkpoint: c }) =>
    c.sessionId !== options.excludeSession && (options.cwd === undefined || c.cwd === options.cwd))
  return entries[entries.length - 1]?.checkpoint
}

