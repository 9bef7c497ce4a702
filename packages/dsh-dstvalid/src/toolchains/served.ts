import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, sep } from 'node:path'
import { isolationSupport, type Isolation } from 'dsh-common'
import type { Change } from '../types.ts'

/**
 * Whether a test command can be shown a change's accepted content in a
 * private mount namespace (ADR 0019): namespaces are available here, and
 * the content before is known for every path the change touched. Unlike
 * the warm runner's served modules, a mount reaches the test's own file
 * reads too (a fixture, a listing of a directory).
 */
export function servableByMount(change: Change): boolean {
  return !!change.before?.size && change.before.size === change.paths.length && isolationSupport().mode === 'namespaces'
}

/** Whether any change whose content before is known can be served by mount here (`Check.servesAnyChange`). */
export function servesAnyByMount(): boolean {
  return isolationSupport().mode === 'namespaces'
}

/**
 * `run` with an isolation that shows each of the change's paths as it was
 * before the change, to that command alone; the workspace itself keeps the
 * change, so no other process ever sees the pre-image. A modified file: its
 * earlier bytes mounted over it. A created or deleted path: the nearest
 * directory above it that exists now is mounted over by one rebuilt as it
 * was (its other entries bound back from the workspace; a deleted file
 * written with its earlier bytes, a created one left out). Undefined when
 * the change cannot be served this way (a path that is neither a file nor
 * absent now).
 */
export async function withAcceptedContent<T>(change: Change, run: (isolate: Isolation) => Promise<T>): Promise<T | undefined> {
  if (!servableByMount(change)) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'dsh-accepted-'))
  try {
    const overlays = acceptedOverlays(change.before!, dir)
    return overlays ? await run({ overlays }) : undefined
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

type Overlay = { source: string; target: string }

/** The mounts (in order) that show `before` under `dir`'s scratch space; undefined when a path cannot be shown so. */
function acceptedOverlays(before: ReadonlyMap<string, Buffer | null>, dir: string): Overlay[] | undefined {
  const files: Overlay[] = []
  /** Per directory to rebuild: entries to leave out, and files (relative to it, maybe in missing directories) to add. */
  const rebuilt = new Map<string, { hide: Set<string>; add: Map<string, Buffer> }>()
  const rebuild = (d: string) => rebuilt.get(d) ?? rebuilt.set(d, { hide: new Set(), add: new Map() }).get(d)!
  let n = 0
  for (const [path, bytes] of before) {
    const now = kindOf(path)
    if (now === 'other') return undefined
    if (bytes !== null && now === 'file') {
      const source = join(dir, `f${n++}`)
      writeFileSync(source, bytes)
      files.push({ source, target: path })
      continue
    }
    if (bytes === null && now === 'absent') continue // created and gone again: as before
    // Created (to hide) or deleted (to add back): the nearest directory above it that exists now.
    let host = dirname(path)
    while (kindOf(host) === 'absent') host = dirname(host)
    if (kindOf(host) !== 'dir') return undefined
    const rel = relative(host, path)
    if (bytes === null) rebuild(host).hide.add(rel.split(sep)[0]!)
    else rebuild(host).add.set(rel, bytes)
  }
  const mounts: Overlay[] = []
  // Outer directories first: an inner one is rebuilt over what the outer one bound back.
  for (const [host, { hide, add }] of [...rebuilt].sort(([a], [b]) => a.length - b.length)) {
    const i = n++
    const stash = join(dir, `s${i}`)
    const copy = join(dir, `d${i}`)
    mkdirSync(stash)
    mkdirSync(copy)
    const back: Overlay[] = []
    for (const entry of readdirSync(host, { withFileTypes: true })) {
      if (hide.has(entry.name)) continue
      const at = join(copy, entry.name)
      if (entry.isSymbolicLink()) symlinkSync(readlinkSync(join(host, entry.name)), at)
      else {
        if (entry.isDirectory()) mkdirSync(at)
        else writeFileSync(at, '')
        back.push({ source: join(stash, entry.name), target: join(host, entry.name) })
      }
    }
    for (const [rel, bytes] of add) {
      const at = join(copy, rel)
      mkdirSync(dirname(at), { recursive: true })
      writeFileSync(at, bytes)
    }
    // The directory as it is now, reachable at `stash`; the rebuilt one over it; its entries bound back.
    mounts.push({ source: host, target: stash }, { source: copy, target: host }, ...back)
  }
  // Modified files last: over whatever the rebuilt directories bound back.
  return [...mounts, ...files]
}

function kindOf(path: string): 'file' | 'dir' | 'absent' | 'other' {
  try {
    const s = lstatSync(path)
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other'
  } catch {
    return 'absent'
  }
}
