/**
 * The selection of a body-only edit's test files by the map of executed
 * functions (ADR 0021), shared by the warm runner and the vitest CLI: each
 * says which test files are related and which of them read a changed file
 * as text, and runs what is selected; what is selected, and what the
 * verdict says of it, is decided here once.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { listFiles } from '../../message.ts'
import type { Change, CheckIO, Measurement } from '../../types.ts'
import { bodyEdit, commentOnly, predictedNames } from '../js/body-edit.ts'
import { contentHash, type DiskHashes, type MapSelection, type TestMap } from './test-map.ts'

/** vitest's default `forceRerunTriggers` (package.json, vite/vitest configs): a change to one can affect every test, so every test runs. */
export const RERUN_ALL = /(?:^|\/)(?:package\.json|vite(?:st)?\.(?:config|workspace|projects)(?:\.[\w-]+)?\.[cm]?[jt]s|vitest\.workspace\.json)$/

/** Modules whose edits the map can judge (parsed as JavaScript or TypeScript). */
const SCRIPT_FILE = /\.[cm]?[jt]sx?$/

/** The related test files of a change (workspace-relative), and those of them that may read a changed file as a file. */
export interface RelatedList {
  files: string[]
  readers: string[]
}

/** What a runner gives the selection: the related test files, and a run of the selected ones. */
export interface MapRunner<L extends RelatedList = RelatedList> {
  root: string
  map: TestMap
  /** Hashes of workspace files on disk. */
  hashes: DiskHashes
  /**
   * Whether {@link listRelated} lists every related test file (the warm runner: vite's module graph). The CLI
   * lists those the map knows; vitest runs the others it finds related, which the verdict counts once they ran.
   */
  listsAll: boolean
  /** The related test files and their readers, without running them; undefined when the runner cannot say. */
  listRelated(change: Change, io: CheckIO): Promise<L | undefined>
  /**
   * Of the listed test files, those the runner leaves out of the map's selection on other grounds (the warm
   * runner: type-only test files when no declaration changed), and what the verdict says of them.
   */
  narrow?(listed: L): { files: ReadonlySet<string>; note(count: number): string } | undefined
  /** The related test files of a change, without running them; undefined when the runner cannot say. */
  relatedTestFiles(change: Change, io: CheckIO): Promise<string[] | undefined>
  /**
   * Run `selection.run` (`leftOut`: the related test files the selection
   * leaves out). `ran`: the test files the run ran, when they may be more
   * than selected (related files the runner did not list: they count as not
   * mapped yet). Undefined: the runner could not run.
   */
  runSelected(selection: MapSelection, leftOut: string[], change: Change, io: CheckIO): Promise<{ measurement: Measurement; ran?: string[] } | undefined>
}

/**
 * A body-only edit, judged by the map: only the related test files that
 * executed a changed function (and those the map cannot vouch for) run,
 * said in a note. Undefined when the map does not apply (said in a
 * notice when the edit was looked at): the related test files run.
 */
export async function measureByMap<L extends RelatedList>(runner: MapRunner<L>, change: Change, io: CheckIO): Promise<Measurement | undefined> {
  const { map } = runner
  if (!change.before) return undefined
  const contents: { file: string; abs: string; bytes: Buffer; now: Buffer }[] = []
  for (const [i, abs] of change.paths.entries()) {
    const file = change.files[i]!
    const bytes = change.before.get(abs)
    if (!SCRIPT_FILE.test(file) || !bytes) return undefined
    try {
      contents.push({ file, abs, bytes, now: readFileSync(abs) })
    } catch {
      // Deleted by the write: today's rules.
      return undefined
    }
  }
  const listed = await runner.listRelated(change, io)
  if (!listed) return undefined
  const { files: related, readers } = listed
  // Nothing but comments and whitespace changed: no test can change outcome, mapped or not — unless it reads a changed file as text.
  let code = false
  for (const { file, bytes, now } of contents) if (await commentOnly(file, bytes.toString('utf8'), now.toString('utf8')) !== true) code = true
  if (!code && !readers.length) {
    keepCurrent(runner, contents, related, readers)
    const note = `tests: none run: only comments and whitespace changed in ${listFiles(contents.map(c => c.file))}`
    io.notice('info', note)
    return { status: 'ok', problems: [], passed: [], scope: [], notes: [note], selected: true }
  }
  const edits = new Map<string, string[]>()
  const before = new Map<string, string>()
  const after = new Map<string, string>()
  for (const { file, abs, bytes, now } of contents) {
    const edit = await bodyEdit(file, bytes.toString('utf8'), now.toString('utf8'))
    if (edit.kind === 'other') {
      // A test file that only itself relates to (nothing imports it) runs whatever changed in it.
      const alone = await runner.relatedTestFiles({ paths: [abs], files: [file] }, io)
      if (alone?.length !== 1 || alone[0] !== file) {
        io.notice('info', `tests: related test files by imports (${edit.reason})`)
        return undefined
      }
    }
    edits.set(file, edit.kind === 'body' ? edit.functions : [])
    before.set(file, contentHash(bytes))
    after.set(file, contentHash(now))
  }
  if (!related.length) return undefined
  // Comments only: no function to vouch for by name.
  if (code) for (const [i, file] of change.files.entries()) {
    const predicted = await predictedNames(file, change.before.get(change.paths[i]!)!.toString('utf8'))
    const unknown = [...map.namesRan(file, related)].find(n => !predicted?.has(n))
    if (unknown !== undefined) {
      io.notice('info', `tests: related test files by imports (${file}: its recorded function \`${unknown}\` is not one this file names)`)
      return undefined
    }
  }
  const picked = map.select(related, edits, f => before.get(f) ?? runner.hashes.of(join(runner.root, f)), f => after.get(f), new Set(readers))
  map.save()
  // Comments only: a test file that may read a changed file as text is the only one that can see the write,
  // mapped or not (on a session's first write none is mapped yet, and every related file would run).
  const chosen = code ? picked : { run: picked.run.filter(f => readers.includes(f)), unmapped: [], stale: [] }
  // The map did not narrow the selection: the related test files (less what the runner leaves out, below).
  if (chosen.run.length === related.length) return undefined
  const narrow = runner.narrow?.(listed)
  const kept = (f: string) => !narrow?.files.has(f)
  const selection = narrow ? { run: chosen.run.filter(kept), unmapped: chosen.unmapped.filter(kept), stale: chosen.stale.filter(kept) } : chosen
  const left = chosen.run.length - selection.run.length
  const noteOf = (s: MapSelection, total: number) => `${selectionNote(s, total, edits, readers)}${left ? `; ${narrow!.note(left)}` : ''}`
  const leftOut = related.filter(f => !selection.run.includes(f))
  if (!selection.run.length) {
    const note = noteOf(selection, related.length)
    io.notice('info', note)
    return { status: 'ok', problems: [], passed: [], scope: [], notes: [note], selected: true }
  }
  if (runner.listsAll) io.notice('info', noteOf(selection, related.length))
  const done = await runner.runSelected(selection, leftOut, change, io)
  if (!done) return undefined
  // Test files the runner ran besides the selection: related ones it found and the map did not know.
  const extra = runner.listsAll ? [] : [...new Set(done.ran ?? [])].filter(f => !selection.run.includes(f) && !leftOut.includes(f))
  const note = noteOf({ ...selection, run: [...selection.run, ...extra], unmapped: [...selection.unmapped, ...extra] }, related.length + extra.length)
  if (!runner.listsAll) io.notice('info', note)
  return { ...done.measurement, notes: [...done.measurement.notes ?? [], note], selected: true }
}

/**
 * A write that changed only comments and whitespace in `contents`: every
 * current entry of `related` (but `readers`, which may read the text) runs
 * the same on the new content, noted so that the next body-only edit finds
 * it current rather than stale.
 */
function keepCurrent(runner: Pick<MapRunner, 'map' | 'root' | 'hashes'>, contents: readonly { file: string; bytes: Buffer; now: Buffer }[],
  related: readonly string[], readers: readonly string[]): void {
  const hashes = new Map(contents.map(c => [c.file, { before: contentHash(c.bytes), after: contentHash(c.now) }]))
  runner.map.select(related, new Map(contents.map(c => [c.file, []])), f => hashes.get(f)?.before ?? runner.hashes.of(join(runner.root, f)),
    f => hashes.get(f)?.after, new Set(readers))
  runner.map.save()
}

/**
 * A write a runner does not test because it changed only comments and
 * whitespace (the vitest CLI's `unaffectedBy`): the map's entries that
 * loaded its files are kept current as {@link measureByMap} keeps them.
 */
export function keepCurrentAfterComments(runner: Pick<MapRunner, 'map' | 'root' | 'hashes'>, change: Change, readers: (related: string[]) => string[]): void {
  const contents: { file: string; bytes: Buffer; now: Buffer }[] = []
  for (const [i, abs] of change.paths.entries()) {
    const bytes = change.before?.get(abs)
    if (!bytes) return
    try {
      contents.push({ file: change.files[i]!, bytes, now: readFileSync(abs) })
    } catch {
      // Gone since: nothing to keep current.
      return
    }
  }
  const related = runner.map.loaders(change.files)
  keepCurrent(runner, contents, related, readers(related))
}

/**
 * What the verdict says of a map selection, e.g.
 * `tests: 3 of 412 related test files: those that ran \`splitPath\``
 * (`, and 1 not mapped yet`, `, and 2 whose map is stale`, `, and 1 changed test file`,
 * `, and 1 that reads a changed file`).
 */
function selectionNote(selection: MapSelection, related: number, edits: ReadonlyMap<string, readonly string[]>, readers: readonly string[]): string {
  const names = [...new Set([...edits.values()].flat())].map(n => `\`${n}\``)
  const head = `tests: ${selection.run.length} of ${related} related test file${related === 1 ? '' : 's'}: `
  if (!names.length && selection.run.length === 0) return `${head}no function changed`
  const changedTests = selection.run.filter(f => edits.has(f)).length
  const reading = selection.run.filter(f => !edits.has(f) && readers.includes(f)).length
  const extras = [
    changedTests ? `${changedTests} changed test file${changedTests === 1 ? '' : 's'}` : '',
    reading ? `${reading} that read${reading === 1 ? 's' : ''} a changed file` : '',
    selection.unmapped.length ? `${selection.unmapped.length} not mapped yet` : '',
    selection.stale.length ? `${selection.stale.length} whose map is stale` : '',
  ].filter(Boolean)
  const base = names.length ? `those that ran ${names.join(', ')}` : 'no function changed'
  return `${head}${base}${extras.length ? `, and ${extras.join(' and ')}` : ''}`
}
