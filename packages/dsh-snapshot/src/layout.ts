import { join } from 'node:path'
import { JOURNAL_SUFFIX } from './journal-format.ts'

/** Where things live in the vault. */

/** `<vault>/snapshots` */
export function snapshotDir(vault: string): string {
  return join(vault, 'snapshots')
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80) || 'session'
}

/** `<vault>/snapshots/<session>.<instance>.journal` — one per session and plugin instance. */
export function journalFileFor(vault: string, sessionId: string, instance: string): string {
  return join(snapshotDir(vault), `${safeName(sessionId)}.${instance}${JOURNAL_SUFFIX}`)
}

/** Where a journal's private git objects and indexes live (`shell: 'git'`). */
export function treeStoreOf(journalFile: string): string {
  return journalFile.slice(0, -JOURNAL_SUFFIX.length) + '.git'
}

/** The shell tracker's pack of a journal (`shell: 'track'`). */
export function packOf(journalFile: string): string {
  return journalFile.slice(0, -JOURNAL_SUFFIX.length) + '.pack'
}

/** The marker file the shell tracker's watch barrier touches. */
export function markerOf(journalFile: string): string {
  return journalFile.slice(0, -JOURNAL_SUFFIX.length) + '.mark'
}
