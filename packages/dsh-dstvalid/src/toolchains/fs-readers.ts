import { existsSync, readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { sourceFiles } from './source-files.ts'
import type { Change } from '../types.ts'
import { fileStamp, NOT_SOURCE_DIRS } from 'dsh-common'

/*
 * Test runners that relate tests to a change only by imports (the vitest
 * CLI, Jest) cannot see a test that reads the file system: one that lists
 * `src/` to check every module is exported, one that reads a fixture. Their
 * reads are not recorded there, so the test files are chosen by their
 * source: a listing change (a file created or deleted) selects every test
 * file that lists directories, a changed file selects those that use the
 * file system and name it. More tests run than read the change; none that
 * reads it is left out, short of a name built at run time.
 */

const SCRIPT = /\.[cm]?[jt]sx?$/
const USES_FS = /\bnode:fs\b|['"]fs(?:\/promises|-extra)?['"]|\bBun\.file\b|import\.meta\.glob\b/
const LISTS = /\breaddir|\bopendir\b|\bglob(?:Sync|Stream|by)?\b|fast-glob|tinyglobby|\bwalk(?:Sync)?\b|import\.meta\.glob\b/

interface Source {
  stamp: string
  fs: boolean
  lists: boolean
  text: string
}

/** What the source of each test file says about its file-system use, by workspace-relative path, re-read when it changed. */
export class FsReaders {
  private readonly sources = new Map<string, Source>()

  constructor(private readonly root: string, private readonly testFile: RegExp) {}

  /**
   * Test files (workspace-relative) that may read `change` as files: those that list directories when a path was
   * created or deleted (or may have been: a shell call's), and those that use the file system and name a changed file.
   */
  readersOf(change: Change): string[] {
    const listing = change.paths.some(p => !existsSync(p) || !change.before || change.before.get(p) === null)
    const names = [...new Set(change.files.map(f => basename(f)))]
    const touched = new Set(change.files)
    const out: string[] = []
    for (const file of sourceFiles(this.root, rel => SCRIPT.test(rel) && this.testFile.test(rel), NOT_SOURCE_DIRS, 20_000)) {
      if (touched.has(file)) continue
      const s = this.source(file)
      if (!s?.fs) continue
      if ((listing && s.lists) || names.some(n => s.text.includes(n))) out.push(file)
    }
    return out.sort()
  }

  private source(file: string): Source | undefined {
    const abs = `${this.root}/${file}`
    const stamp = fileStamp(abs)
    // Gone since the listing: not a reader.
    if (stamp === undefined) return undefined
    const known = this.sources.get(file)
    if (known?.stamp === stamp) return known
    let text: string
    try {
      text = readFileSync(abs, 'utf8')
    } catch {
      // Unreadable: as if absent.
      return undefined
    }
    const fs = USES_FS.test(text)
    const s = { stamp, fs, lists: fs && LISTS.test(text), text: fs ? text : '' }
    this.sources.set(file, s)
    return s
  }
}
