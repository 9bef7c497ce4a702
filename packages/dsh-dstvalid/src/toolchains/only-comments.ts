import { readFileSync } from 'node:fs'
import { listFiles } from '../message.ts'
import type { Change } from '../types.ts'

/** `true` when only comments and blanks changed (anything else: code changed, or why it cannot tell). */
export type CommentsOnly = (file: string, before: string, after: string) => Promise<unknown>

/**
 * Why a write cannot change what a check reports: every written file is
 * of `kind`, existed before, and `same` says only comments changed in it.
 */
export async function onlyComments(change: Change, kind: RegExp, same: CommentsOnly): Promise<string | undefined> {
  const before = change.before
  if (!before || !change.paths.length) return undefined
  for (const [i, path] of change.paths.entries()) {
    const file = change.files[i]!
    const was = before.get(path)
    if (!kind.test(file) || !was) return undefined
    let now: Buffer
    try {
      now = readFileSync(path)
    } catch {
      // Gone or unreadable after the write: checked as any change.
      return undefined
    }
    if ((await same(file, was.toString('utf8'), now.toString('utf8'))) !== true) return undefined
  }
  return `only comments and whitespace changed in ${listFiles(change.files)}`
}
