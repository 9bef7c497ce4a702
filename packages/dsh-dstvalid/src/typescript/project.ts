import { resolve } from 'node:path'
import type * as TS from 'typescript'
import type { DocumentCache } from './documents.ts'

/** A compiler host that may ask for referenced projects' sources instead of their outputs (present in TypeScript 5.x, not in its public typings). */
interface RedirectingHost extends TS.CompilerHost {
  useSourceOfProjectReferenceRedirect?(): boolean
}

/** A program that can tell which of its files are a referenced project's sources (TypeScript 5.x, not in its public typings). */
interface RedirectAwareProgram extends TS.Program {
  isSourceOfProjectReferenceRedirect?(fileName: string): boolean
}

/**
 * One tsconfig project of a graph: its parsed config (its own compiler
 * options, `extends` resolved) and a warm builder program over the shared
 * document cache. Files of referenced projects come in as their sources
 * (as the language service does, so nothing has to be built first) and
 * are judged in their own project only, as `tsc -b` judges them.
 */
export class TsProject {
  private _parsed?: TS.ParsedCommandLine
  private _configErrors: TS.Diagnostic[] = []
  private _roots = new Set<string>()
  private _configFiles = new Set<string>()
  private _host?: RedirectingHost
  private _builder?: TS.SemanticDiagnosticsBuilderProgram
  private _files = new Set<string>()
  private _diagnostics: TS.Diagnostic[] = []
  private _stale = true
  /** A file appeared or vanished: every module resolution of the old program may be wrong (a failed one would otherwise be reused). */
  private _resolutionsStale = false

  constructor(
    private readonly ts: typeof TS,
    readonly configPath: string,
    private readonly documents: DocumentCache,
    private readonly extendedConfigCache: Map<string, TS.ExtendedConfigCacheEntry>,
  ) {}

  /** The parsed config (parsed on first use). */
  get parsed(): TS.ParsedCommandLine {
    if (!this._parsed) this.parseConfig()
    return this._parsed!
  }

  /** Whether the config lists files of its own (a solution file has none: only references). */
  get hasProgram(): boolean {
    return this.parsed.fileNames.length > 0
  }

  /** Absolute paths of the config's referenced projects. */
  get references(): string[] {
    return (this.parsed.projectReferences ?? []).map(r => resolve(this.ts.resolveProjectReferencePath(r)))
  }

  /** The config file and every file it `extends`, absolute. */
  get configFiles(): ReadonlySet<string> {
    if (!this._parsed) this.parseConfig()
    return this._configFiles
  }

  /** Root files of the config (include/files), absolute. */
  get roots(): ReadonlySet<string> {
    if (!this._parsed) this.parseConfig()
    return this._roots
  }

  /** Every file of the last program (roots, what they import, libs), absolute. */
  get files(): ReadonlySet<string> {
    return this._files
  }

  get builder(): TS.SemanticDiagnosticsBuilderProgram | undefined {
    return this._builder
  }

  get host(): TS.CompilerHost | undefined {
    return this._host
  }

  /** The diagnostics of the last check. */
  get diagnostics(): readonly TS.Diagnostic[] {
    return this._diagnostics
  }

  /** Whether the next check must rebuild the program. */
  get stale(): boolean {
    return this._stale || !this._builder && this.hasProgram
  }

  /**
   * Something the program may read changed: rebuild on the next check.
   * `reparse`: the config (or its file set) too, and every module resolution
   * (a file was created or deleted, or resolution settings may have moved).
   */
  markStale(reparse = false): void {
    this._stale = true
    if (reparse) {
      this._parsed = undefined
      this._resolutionsStale = true
    }
  }

  /** Whether the last program read `path` (absolute). */
  reads(path: string): boolean {
    return this._files.has(path)
  }

  /**
   * Bring the program up to date and return its diagnostics (config, options,
   * global, and syntactic + semantic of its own files) and how many files
   * were re-checked. A project without files reports its config diagnostics only.
   */
  check(): { diagnostics: readonly TS.Diagnostic[]; rechecked: number } {
    const ts = this.ts
    const parsed = this.parsed
    this._stale = false
    if (!parsed.fileNames.length) {
      this._builder = undefined
      this._files = new Set()
      this._diagnostics = [...this._configErrors]
      return { diagnostics: this._diagnostics, rechecked: 0 }
    }
    const host = this._host ??= this.createHost(parsed.options)
    const builder = this._builder = ts.createSemanticDiagnosticsBuilderProgram(parsed.fileNames, parsed.options, host, this._builder, this._configErrors, parsed.projectReferences)
    this._resolutionsStale = false
    const program = builder.getProgram() as RedirectAwareProgram
    const foreign = (sf: TS.SourceFile) => !!program.isSourceOfProjectReferenceRedirect?.(sf.fileName)
    let rechecked = 0
    while (builder.getSemanticDiagnosticsOfNextAffectedFile(undefined, foreign)) rechecked++
    const diagnostics: TS.Diagnostic[] = [
      ...builder.getConfigFileParsingDiagnostics(),
      ...builder.getOptionsDiagnostics(),
      ...builder.getGlobalDiagnostics(),
    ]
    const files = new Set<string>()
    for (const sf of program.getSourceFiles()) {
      files.add(resolve(sf.fileName))
      if (foreign(sf)) continue
      diagnostics.push(...builder.getSyntacticDiagnostics(sf), ...builder.getSemanticDiagnostics(sf))
    }
    this._files = files
    this._diagnostics = diagnostics
    return { diagnostics, rechecked }
  }

  private parseConfig() {
    const ts = this.ts
    const errors: TS.Diagnostic[] = []
    // No emit, ever: nothing (build info included) is written into the workspace.
    const parsed = ts.getParsedCommandLineOfConfigFile(this.configPath, { noEmit: true }, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: d => { errors.push(d) },
    }, this.extendedConfigCache)
    if (!parsed) {
      this._parsed = { options: { noEmit: true }, fileNames: [], errors }
      this._configErrors = errors
    } else {
      this._parsed = parsed
      this._configErrors = [...errors, ...parsed.errors]
    }
    const extended = (this._parsed.options.configFile as (TS.TsConfigSourceFile & { extendedSourceFiles?: string[] }) | undefined)?.extendedSourceFiles ?? []
    this._configFiles = new Set([resolve(this.configPath), ...extended.map(f => resolve(f))])
    this._roots = new Set(this._parsed.fileNames.map(f => resolve(f)))
    this._host = undefined
    this._stale = true
  }

  private createHost(options: TS.CompilerOptions): RedirectingHost {
    const host: RedirectingHost = this.documents.host(options)
    host.useSourceOfProjectReferenceRedirect = () => true
    // Without it, a program reuses an unchanged file's failed resolution of a module that has just been created (or restored).
    host.hasInvalidatedResolutions = () => this._resolutionsStale
    return host
  }
}
