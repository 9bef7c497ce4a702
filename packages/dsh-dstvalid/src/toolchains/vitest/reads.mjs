// @ts-check
/**
 * The file-system reads the reads recorder (reads-recorder.mjs) saw each
 * test file make, as the warm runner (server.mjs) and the vitest CLI check
 * keep them: loaded from the recorder's records, asked whether a test file
 * reads a changed path as a file. Plain JavaScript with Node built-ins only:
 * the warm runner imports it under plain Node.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'

/**
 * Paths read, directories listed, trees listed recursively; `code`: those of
 * them made by code, not by the runner loading a module.
 * @typedef {{ read: Set<string>, list: Set<string>, tree: Set<string> }} Reads
 * @typedef {Reads & { code: Reads }} TestReads
 */

/**
 * Merge the recorder's records (in `dir`) of test files that just ran into `reads` (absolute test file → its reads).
 * @param {string} dir @param {Iterable<string>} files @param {Map<string, TestReads>} reads
 */
export function loadReads(dir, files, reads) {
  for (const file of new Set(files)) {
    let text = ''
    try {
      text = readFileSync(join(dir, `${createHash('sha1').update(file).digest('hex')}.jsonl`), 'utf8')
    } catch {
      // It read nothing under the workspace (or never ran to its setup file).
    }
    const entry = reads.get(file) ?? { read: new Set(), list: new Set(), tree: new Set(), code: { read: new Set(), list: new Set(), tree: new Set() } }
    for (const line of text.split('\n')) {
      if (!line) continue
      const [, kind, path, by] = JSON.parse(line)
      if (kind !== 'read' && kind !== 'list' && kind !== 'tree') continue
      entry[/** @type {'read' | 'list' | 'tree'} */ (kind)].add(path)
      if (by !== 'runner') entry.code[/** @type {'read' | 'list' | 'tree'} */ (kind)].add(path)
    }
    reads.set(file, entry)
  }
}

/** Whether a test file's recorded reads see a change of `file` (created, deleted or modified). @param {Reads} entry @param {string} file */
export function readsSee(entry, file) {
  if (entry.read.has(file) || entry.list.has(dirname(file))) return true
  for (const dir of entry.tree) if (file.startsWith(dir + sep)) return true
  return false
}

/**
 * Source text that touches the file system (a test file that has not run yet
 * may read what changed): the fs module, its read and list calls, glob
 * functions and packages (vite's `import.meta.glob` too), Deno's and Bun's
 * file reads. Not `global`/`globalThis`, which most test files of a library
 * that runs on several runtimes mention.
 */
const USES_FS = /\bnode:fs\b|['"]fs(?:\/promises)?['"]|\breaddir|\breadFile|\breadTextFile|\bexistsSync\b|\bBun\.file\b|\bglob(?:Sync|Stream|by)?\b|fast-glob|tinyglobby/

/** @param {string} file */
export function usesFs(file) {
  try {
    return USES_FS.test(readFileSync(file, 'utf8'))
  } catch {
    return false
  }
}

/**
 * Of `tests` (absolute), those that may read one of `changed` as a file: their code's recorded reads see it
 * (not the runner loading it as a module), or, never recorded, they use the file system. What they do with
 * its text no map of executed functions can tell.
 * @param {Map<string, TestReads>} reads @param {Iterable<string>} tests @param {readonly string[]} changed
 */
export function readersOf(reads, tests, changed) {
  return [...new Set(tests)].filter(test => {
    const entry = reads.get(test)
    return entry ? changed.some(file => readsSee(entry.code, file)) : usesFs(test)
  })
}
