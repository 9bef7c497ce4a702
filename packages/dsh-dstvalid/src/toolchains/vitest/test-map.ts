/**
 * The map of what each test file executed (ADR 0021): per test file, every
 * workspace module it loaded, with the hash of the content it ran on and
 * the names of the functions of it that ran. Recorded from the runs the
 * guard makes anyway; kept per workspace in the vault.
 *
 * A test file's entry is trusted only while every module it loaded still
 * has a content it was recorded on (or one proven equivalent for it, see
 * {@link TestMap.select}): a test's execution depends on all the code it
 * ran, so any change there makes the whole entry stale until the test runs
 * again and is re-recorded.
 */
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { mkdirpTracked, writeFileAtomicSync } from 'dsh-common'

/** One module a test file loaded: content hashes it ran the same on (the newest first), the functions of it that ran. */
interface ModuleEntry {
  hashes: string[]
  ran: string[]
}

/** A test file's entry: workspace-relative module → what it ran of it. */
type TestEntry = Record<string, ModuleEntry>

/** Hashes per module kept as proven equivalent (a test the edit could not reach keeps running the same). */
const MAX_HASHES = 4

const FORMAT = 1

/** What a selection found: the test files to run, and why each of the others may be left out. */
export interface MapSelection {
  /** Workspace-relative test files to run. */
  run: string[]
  /** Of `run`: test files the map has no entry for. */
  unmapped: string[]
  /** Of `run`: test files whose entry is stale (a module they loaded changed since). */
  stale: string[]
}

/** The content hash of a file (sha1, hex). */
export function contentHash(bytes: Buffer | string): string {
  return createHash('sha1').update(bytes).digest('hex')
}

/**
 * Hashes of workspace files as they are on disk, cached by size and mtime
 * (the map asks for the same modules at every selection).
 */
export class DiskHashes {
  private readonly cache = new Map<string, { stamp: string; hash: string }>()

  /** `abs`'s hash now, undefined when it cannot be read. */
  of(abs: string): string | undefined {
    let stamp: string
    try {
      const s = statSync(abs)
      stamp = `${s.mtimeMs}:${s.size}:${s.ino}`
    } catch {
      return undefined
    }
    const hit = this.cache.get(abs)
    if (hit?.stamp === stamp) return hit.hash
    try {
      const hash = contentHash(readFileSync(abs))
      this.cache.set(abs, { stamp, hash })
      return hash
    } catch {
      return undefined
    }
  }
}

export class TestMap {
  private readonly tests = new Map<string, TestEntry>()
  private dirty = false
  /** Entries as they were before the judgement that is running re-recorded them (undefined: none then). */
  private undoLog?: Map<string, TestEntry | undefined>

  /** `file`: where the map is kept (read now if it exists; an unreadable or older map is started afresh). */
  constructor(private readonly file?: string) {
    if (!file) return
    try {
      const data = JSON.parse(readFileSync(file, 'utf8')) as { format?: number; tests?: Record<string, TestEntry> }
      if (data.format === FORMAT) for (const [test, entry] of Object.entries(data.tests ?? {})) this.tests.set(test, entry)
    } catch {
      // No map yet (or a damaged one): every test file is unmapped until it runs.
    }
  }

  /** A judgement begins: what it re-records can be undone (see {@link undo}). */
  begin(): void {
    this.undoLog = new Map()
  }

  /**
   * The judged write was rolled back byte for byte: the entries its runs
   * re-recorded (on content that is gone), and those its selection noted as
   * equivalent on that content, are put back as they were, which were
   * recorded on the content that is back.
   */
  undo(): void {
    for (const [test, entry] of this.undoLog ?? []) {
      if (entry) this.tests.set(test, entry)
      else this.tests.delete(test)
      this.dirty = true
    }
    this.undoLog = undefined
  }

  /** Test files with an entry. */
  get size(): number {
    return this.tests.size
  }

  /**
   * Record what test files ran (workspace-relative test file → module →
   * function names); `hashOf` gives a module's content hash as the run saw
   * it (undefined: gone, the entry is not kept). `ran` without calls (they
   * ran without a record: failed before their last hook) lose their entry.
   */
  record(calls: Record<string, Record<string, string[]>>, ran: readonly string[], hashOf: (file: string) => string | undefined): void {
    // Every test file of a run loaded mostly the same modules (valibot: 247 files, 45,000 module entries): each hashed once.
    const hashes = new Map<string, string | undefined>()
    const hashOnce = (file: string) => {
      if (!hashes.has(file)) hashes.set(file, hashOf(file))
      return hashes.get(file)
    }
    for (const test of new Set([...ran, ...Object.keys(calls)])) if (this.undoLog && !this.undoLog.has(test)) this.undoLog.set(test, this.tests.get(test))
    for (const test of ran) if (!calls[test] && this.tests.delete(test)) this.dirty = true
    for (const [test, modules] of Object.entries(calls)) {
      const entry: TestEntry = {}
      let complete = true
      for (const [module, names] of Object.entries(modules)) {
        const hash = hashOnce(module)
        if (hash === undefined) {
          complete = false
          break
        }
        entry[module] = { hashes: [hash], ran: [...new Set(names)].sort() }
      }
      if (complete) this.tests.set(test, entry)
      else this.tests.delete(test)
      this.dirty = true
    }
  }

  /** The mapped test files that are one of `modules` or loaded one of them when they were recorded. */
  loaders(modules: readonly string[]): string[] {
    return [...this.tests].filter(([test, entry]) => modules.some(m => m === test || entry[m])).map(([test]) => test)
  }

  /** Every function name recorded as run in `module` by a test file in `tests`. */
  namesRan(module: string, tests: readonly string[]): Set<string> {
    const out = new Set<string>()
    for (const test of tests) for (const name of this.tests.get(test)?.[module]?.ran ?? []) out.add(name)
    return out
  }

  /**
   * The test files among `related` that an edit confined to the bodies of
   * `edits` (workspace-relative module → changed function names) can
   * affect: a changed test file; one of `readers` (it reads a changed file
   * as a file: what it does with the text is not in the map); one with no entry or a stale one (a module
   * it loaded has neither its recorded content nor one proven equivalent;
   * `acceptedHash` gives the content before the edit); one that ran a
   * changed function. A test file left out ran none of them on this very
   * content: it runs the same on the edited content, which is noted as
   * equivalent for it (`editedHash`: the content after the edit), so the
   * next edit finds its entry current.
   */
  select(related: readonly string[], edits: ReadonlyMap<string, readonly string[]>, acceptedHash: (file: string) => string | undefined, editedHash: (file: string) => string | undefined, readers: ReadonlySet<string> = new Set()): MapSelection {
    const out: MapSelection = { run: [], unmapped: [], stale: [] }
    for (const test of related) {
      if (edits.has(test) || readers.has(test)) {
        out.run.push(test)
        continue
      }
      const entry = this.tests.get(test)
      if (!entry) {
        out.run.push(test)
        out.unmapped.push(test)
        continue
      }
      if (Object.entries(entry).some(([module, m]) => !m.hashes.includes(acceptedHash(module) ?? '\u0000'))) {
        out.run.push(test)
        out.stale.push(test)
        continue
      }
      if ([...edits].some(([module, names]) => entry[module]?.ran.some(n => names.includes(n)))) {
        out.run.push(test)
        continue
      }
      for (const module of edits.keys()) {
        const m = entry[module]
        const hash = editedHash(module)
        if (m && hash && !m.hashes.includes(hash)) {
          // Noted within a judgement: a rollback takes it back, or each rolled-back edit would push a hash the
          // content really has out of the entry (after four, every test file of the module ran as stale).
          if (this.undoLog && !this.undoLog.has(test)) this.undoLog.set(test, structuredClone(entry))
          m.hashes = [hash, ...m.hashes].slice(0, MAX_HASHES)
          this.dirty = true
        }
      }
    }
    return out
  }

  /** Write the map to its file when it changed (atomically). */
  save(): void {
    if (!this.file || !this.dirty) return
    mkdirpTracked(dirname(this.file))
    writeFileAtomicSync(this.file, JSON.stringify({ format: FORMAT, tests: Object.fromEntries(this.tests) }))
    this.dirty = false
  }
}
