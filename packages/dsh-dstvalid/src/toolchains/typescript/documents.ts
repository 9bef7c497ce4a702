import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type * as TS from 'typescript'

interface CachedFile {
  sf: TS.SourceFile
  mtimeMs: number
  size: number
}

type VersionedSourceFile = TS.SourceFile & { version?: string }

export function statOf(file: string): { mtimeMs: number; size: number } | undefined {
  try {
    const s = statSync(file)
    return { mtimeMs: s.mtimeMs, size: s.size }
  } catch {
    // ENOENT (or unreadable): treated as gone.
    return undefined
  }
}

/**
 * Parsed source files shared by every program of a project graph, so that
 * memory does not grow with the number of projects: a `lib.d.ts`, a
 * `node_modules` declaration or a package's source read by five programs is
 * parsed once. Files are keyed by path and by the compiler settings that
 * change a parse (TypeScript's own document-registry key: target, module
 * detection, strictness, …), so two programs share a tree only when
 * TypeScript itself would. Entries are re-validated by mtime and size.
 */
export class DocumentCache {
  private readonly _files = new Map<string, CachedFile>()
  /** Every key of a path (one per settings key it was parsed with). */
  private readonly _byPath = new Map<string, Set<string>>()
  private readonly _registry: TS.DocumentRegistry

  constructor(private readonly ts: typeof TS) {
    this._registry = ts.createDocumentRegistry()
  }

  /** Number of parsed trees held (for tests and measurements). */
  get size(): number {
    return this._files.size
  }

  /**
   * Drop the trees of `changed` (absolute paths a write touched) and of every
   * file whose mtime or size moved on disk. Returns the paths dropped.
   */
  invalidate(changed: readonly string[]): Set<string> {
    const dropped = new Set<string>()
    for (const p of changed) if (this._byPath.has(p)) dropped.add(p)
    for (const [path, keys] of this._byPath) {
      if (dropped.has(path)) continue
      const s = statOf(path)
      for (const key of keys) {
        const entry = this._files.get(key)
        if (!s || !entry || s.mtimeMs !== entry.mtimeMs || s.size !== entry.size) {
          dropped.add(path)
          break
        }
      }
    }
    for (const path of dropped) {
      for (const key of this._byPath.get(path) ?? []) this._files.delete(key)
      this._byPath.delete(path)
    }
    return dropped
  }

  /** Forget every tree. */
  clear(): void {
    this._files.clear()
    this._byPath.clear()
  }

  /** A compiler host for `options` whose `getSourceFile` reads through the shared cache. */
  host(options: TS.CompilerOptions): TS.CompilerHost {
    const ts = this.ts
    const host = ts.createCompilerHost(options)
    const settings = `${this._registry.getKeyForCompilationSettings(options)}|${options.jsx ?? ''}|${options.moduleDetection ?? ''}`
    const original = host.getSourceFile.bind(host)
    host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
      const lv = typeof languageVersionOrOptions === 'object'
        ? `${languageVersionOrOptions.languageVersion}/${languageVersionOrOptions.impliedNodeFormat ?? ''}/${languageVersionOrOptions.jsDocParsingMode ?? ''}`
        : String(languageVersionOrOptions)
      const path = resolve(fileName)
      const key = `${path}\u0000${settings}\u0000${lv}`
      const cached = this._files.get(key)
      if (cached && !shouldCreateNewSourceFile) return cached.sf
      const s = statOf(fileName)
      const sf = original(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) as VersionedSourceFile | undefined
      if (!sf || !s) return sf
      sf.version = createHash('sha1').update(sf.text).digest('hex')
      this._files.set(key, { sf, mtimeMs: s.mtimeMs, size: s.size })
      let keys = this._byPath.get(path)
      if (!keys) this._byPath.set(path, keys = new Set())
      keys.add(key)
      return sf
    }
    return host
  }
}
