import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { basename, relative, resolve, sep } from 'node:path'
import type * as TS from 'typescript'
import { findImporters, type ImpactList, type ImportEdge } from '../impact/graph.ts'
import { programImports } from './imports.ts'

/** One diagnostic as the checker reports it (plain data: it crosses a worker boundary). */
export interface TsDiagnostic {
  /** Workspace-relative, forward slashes; `''` for a global or options diagnostic. */
  file: string
  line?: number
  code: number
  category: 'error' | 'warning'
  message: string
}

export interface TsCheckResult {
  diagnostics: TsDiagnostic[]
  /** Files whose semantic diagnostics were recomputed (the rest came from the warm program). */
  rechecked: number
  /** Files in the program. */
  files: number
  durationMs: number
  tsVersion: string
}

interface CachedFile {
  sf: TS.SourceFile
  mtimeMs: number
  size: number
}

type VersionedSourceFile = TS.SourceFile & { version?: string }

function statOf(file: string): { mtimeMs: number; size: number } | undefined {
  try {
    const s = statSync(file)
    return { mtimeMs: s.mtimeMs, size: s.size }
  } catch {
    // ENOENT (or unreadable): treated as gone.
    return undefined
  }
}

/**
 * A warm, incremental type-checker for one tsconfig, on the workspace's own
 * `typescript` module. Source files are cached by mtime+size and the builder
 * program keeps per-file semantic diagnostics, so after a one-file edit only
 * the files the edit can affect are re-checked. Synchronous and CPU-bound:
 * run it in a worker (see `worker.ts`) to keep an event loop responsive.
 */
export class TsProgramChecker {
  private readonly _cache = new Map<string, CachedFile>()
  private _builder?: TS.SemanticDiagnosticsBuilderProgram
  private _parsed?: TS.ParsedCommandLine
  private _configErrors: TS.Diagnostic[] = []
  private _roots = new Set<string>()
  private _host?: TS.CompilerHost
  /** The import graph of one builder program (recomputed when the program changes). */
  private _edges?: { builder: TS.SemanticDiagnosticsBuilderProgram; edges: ImportEdge[] }

  constructor(private readonly ts: typeof TS, readonly root: string, readonly configPath: string) {}

  get version(): string {
    return this.ts.version
  }

  /**
   * Diagnostics of the whole program, as `tsc --noEmit -p <config>` reports
   * them. `changed`: absolute paths a write touched (a hint: every cached file
   * is re-validated by mtime+size anyway, so out-of-band edits are seen too).
   */
  check(changed: readonly string[] = []): TsCheckResult {
    const started = performance.now()
    const ts = this.ts
    const builder = this.refresh(changed)
    let rechecked = 0
    while (builder.getSemanticDiagnosticsOfNextAffectedFile()) rechecked++
    const all = [
      ...builder.getConfigFileParsingDiagnostics(),
      ...builder.getOptionsDiagnostics(),
      ...builder.getGlobalDiagnostics(),
      ...builder.getSyntacticDiagnostics(),
      ...builder.getSemanticDiagnostics(),
    ]
    return {
      diagnostics: this.toPlain(all),
      rechecked,
      files: builder.getSourceFiles().length,
      durationMs: Math.round(performance.now() - started),
      tsVersion: ts.version,
    }
  }

  /**
   * Importers of `files` (workspace-relative) in the program's own import
   * graph, nearest first, at most `max`. Uses the warm program as the last
   * check left it (the accepted state), building one only if there is none.
   */
  importers(files: readonly string[], max: number): ImpactList {
    const builder = this._builder ?? this.refresh([])
    if (this._edges?.builder !== builder) {
      this._edges = { builder, edges: programImports(this.ts, builder.getProgram(), this.root, this._host ?? this.ts.sys) }
    }
    return findImporters(this._edges.edges, files, max)
  }

  /** Bring the builder program up to date with the files on disk. */
  private refresh(changed: readonly string[]): TS.SemanticDiagnosticsBuilderProgram {
    const ts = this.ts
    this.invalidate(changed)
    if (!this._parsed || this.needsReparse(changed)) this.parseConfig()
    const parsed = this._parsed!
    const host = this._host ??= this.createHost(parsed.options)
    this._builder = ts.createSemanticDiagnosticsBuilderProgram(parsed.fileNames, parsed.options, host, this._builder, this._configErrors, parsed.projectReferences)
    return this._builder
  }

  private invalidate(changed: readonly string[]) {
    for (const p of changed) {
      for (const key of this._cache.keys()) if (key.startsWith(p + '\u0000')) this._cache.delete(key)
    }
    for (const [key, entry] of this._cache) {
      const s = statOf(key.slice(0, key.indexOf('\u0000')))
      if (!s || s.mtimeMs !== entry.mtimeMs || s.size !== entry.size) this._cache.delete(key)
    }
  }

  /** A new, deleted or config file changes the root set: glob the tsconfig again. */
  private needsReparse(changed: readonly string[]): boolean {
    return changed.some(p => {
      const name = basename(p)
      if (/^tsconfig.*\.json$/.test(name) || name === 'package.json') return true
      return /\.[cm]?[jt]sx?$/.test(p) && this._roots.has(p) !== !!statOf(p)
    })
  }

  private parseConfig() {
    const ts = this.ts
    const errors: TS.Diagnostic[] = []
    const parsed = ts.getParsedCommandLineOfConfigFile(this.configPath, { noEmit: true }, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: d => { errors.push(d) },
    })
    if (!parsed) {
      this._parsed = { options: { noEmit: true }, fileNames: [], errors }
      this._configErrors = errors
    } else {
      this._parsed = parsed
      this._configErrors = [...errors, ...parsed.errors]
    }
    this._roots = new Set(this._parsed.fileNames.map(f => resolve(f)))
    this._host = undefined
  }

  private createHost(options: TS.CompilerOptions): TS.CompilerHost {
    const ts = this.ts
    const host = ts.createCompilerHost(options)
    const original = host.getSourceFile.bind(host)
    host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
      const lv = typeof languageVersionOrOptions === 'object'
        ? `${languageVersionOrOptions.languageVersion}/${languageVersionOrOptions.impliedNodeFormat ?? ''}`
        : String(languageVersionOrOptions)
      const key = `${resolve(fileName)}\u0000${lv}`
      const cached = this._cache.get(key)
      if (cached && !shouldCreateNewSourceFile) return cached.sf
      const s = statOf(fileName)
      const sf = original(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) as VersionedSourceFile | undefined
      if (!sf || !s) return sf
      sf.version = createHash('sha1').update(sf.text).digest('hex')
      this._cache.set(key, { sf, mtimeMs: s.mtimeMs, size: s.size })
      return sf
    }
    return host
  }

  private toPlain(diagnostics: readonly TS.Diagnostic[]): TsDiagnostic[] {
    const ts = this.ts
    const out: TsDiagnostic[] = []
    for (const d of diagnostics) {
      if (d.category !== ts.DiagnosticCategory.Error && d.category !== ts.DiagnosticCategory.Warning) continue
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
      let file = ''
      let line: number | undefined
      if (d.file) {
        file = relative(this.root, d.file.fileName).split(sep).join('/')
        if (d.start !== undefined) line = d.file.getLineAndCharacterOfPosition(d.start).line + 1
      }
      out.push({ file, line, code: d.code, category: d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning', message })
    }
    return out
  }
}
