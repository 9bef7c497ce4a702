import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { atomicTempPath, ensureVault, writeFileAtomicSync } from 'dsh-common'
import type * as TS from 'typescript'
import { changedExports, mentionsAny } from './changed-exports.ts'
import type { DocumentCache } from './documents.ts'

/** Bumped when what this suite puts into a build-info file (or how it builds programs) changes: older files are ignored. */
const CACHE_FORMAT = 2

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex')

/** Compiler options as plain data (the parsed config's own source file left out), keys sorted. */
function plainOptions(options: TS.CompilerOptions): string {
  return JSON.stringify(options, (key, value: unknown) => {
    if (key === 'configFile') return undefined
    if (value && typeof value === 'object' && !Array.isArray(value)) return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
    return value
  })
}

/** A compiler host that may ask for referenced projects' sources instead of their outputs (present in TypeScript 5.x, not in its public typings). */
interface RedirectingHost extends TS.CompilerHost {
  useSourceOfProjectReferenceRedirect?(): boolean
}

/** A builder whose program can be dropped while its state is kept (TypeScript 5.x and 6, not in their public typings; `tsc -b` does it). */
interface ReleasableBuilder extends TS.SemanticDiagnosticsBuilderProgram {
  getProgramOrUndefined?(): TS.Program | undefined
  releaseProgram?(): void
}

/** The builder's program, or undefined once released. */
function programOf(builder: TS.SemanticDiagnosticsBuilderProgram | undefined): TS.Program | undefined {
  return (builder as ReleasableBuilder | undefined)?.getProgramOrUndefined?.()
}

/** A program that can tell which of its files are a referenced project's sources (TypeScript 5.x, not in its public typings). */
interface RedirectAwareProgram extends TS.Program {
  isSourceOfProjectReferenceRedirect?(fileName: string): boolean
}

/** A builder's state (TypeScript 5.x and 6, not in their public typings): each file's version and declaration signature, and who imports whom. */
interface BuilderState {
  fileInfos?: Map<string, { version: string; signature?: string }>
  /** `getKeys(path)`: the files that reference `path`. */
  referencedMap?: { getKeys(path: string): ReadonlySet<string> | undefined }
}

/** A builder exposes its state as `state` (TypeScript 5.6 on) or through `getState()` (before 5.6). */
interface BuilderWithState extends TS.SemanticDiagnosticsBuilderProgram {
  state?: BuilderState
  getState?(): BuilderState
}

function stateOf(builder: TS.SemanticDiagnosticsBuilderProgram | undefined): BuilderState | undefined {
  const b = builder as BuilderWithState | undefined
  return b?.state ?? b?.getState?.()
}

/** What a project's check reports. */
export interface ProjectCheck {
  diagnostics: readonly TS.Diagnostic[]
  /** Files whose semantic diagnostics were recomputed, absolute, in checking order. */
  rechecked: string[]
  /** The builder started from the build-info cache. */
  restored: boolean
  /**
   * The written files (`checking(changed)`) that are this program's own, absolute, when their
   * declaration signatures were compared with the builder's from before the write; `kept`:
   * every one of them is unchanged. Absent: not compared (no write, no earlier state).
   */
  signatures?: { written: string[]; kept: boolean }
}

/** A pause of a check: a file (or the write's own files, together) whose diagnostics include one the project's last check did not report for it. */
export interface TsPause {
  /** Their syntactic and semantic diagnostics now. */
  diagnostics: readonly TS.Diagnostic[]
}

/** A project's check that re-checked at least this many files leaves its type-checker behind (see `dropChecker`). */
const COMPACT_AFTER = 50

/** `EmitOnly.BuilderSignature`: the emit a builder asks for to compute a file's declaration signature. */
const BUILDER_SIGNATURE = 2

/** `Program.emit` with the arguments the builder passes (its last three are not in the public typings). */
type ProgramEmit = (sourceFile: TS.SourceFile | undefined, writeFile: TS.WriteFileCallback | undefined,
  cancellationToken: TS.CancellationToken | undefined, emitOnly?: boolean | number, ...rest: unknown[]) => TS.EmitResult

/**
 * Whether two trees of a file import and reference the same modules and files
 * (a body may hold a dynamic `import()` or `require`). The imports a program
 * adds of its own (`jsxImportSource`, `importHelpers`: no position in the
 * text) follow its options and the file's pragmas, compared instead: the two
 * trees may have been parsed for programs of different options.
 */
function sameReferences(a: TS.SourceFile, b: TS.SourceFile): boolean {
  type Referencing = TS.SourceFile & {
    imports?: readonly TS.StringLiteralLike[]
    moduleAugmentations?: readonly (TS.StringLiteral | TS.Identifier)[]
    ambientModuleNames?: readonly string[]
    pragmas?: ReadonlyMap<string, unknown>
  }
  const names = (sf: Referencing) => {
    if (!sf.imports || !sf.moduleAugmentations || !sf.pragmas) return undefined
    return JSON.stringify([
      sf.imports.filter(i => i.pos >= 0).map(i => i.text), [...sf.pragmas], sf.moduleAugmentations.map(m => m.text), sf.ambientModuleNames ?? [],
      sf.referencedFiles.map(r => r.fileName), sf.typeReferenceDirectives.map(r => `${r.fileName}\u0000${r.resolutionMode ?? ''}`), sf.libReferenceDirectives.map(r => r.fileName),
    ])
  }
  const before = names(a as Referencing)
  return before !== undefined && before === names(b as Referencing)
}

/**
 * `ts.computeSignatureWithDiagnostics` (TypeScript 5.x and 6, not in their public typings): how a builder hashes
 * a file's declaration emit into its signature.
 */
type ComputeSignature = (program: TS.Program, sf: TS.SourceFile, text: string, host: TS.CompilerHost, data: TS.WriteFileCallbackData | undefined) => string

/**
 * The declaration signature of `sf` as the project that owns it computed it
 * in its last check (the owner is checked first), or undefined when it has
 * none for this content.
 */
export type OwnerSignature = (sf: TS.SourceFile) => string | undefined

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
  /** When the project is stale only because files it reads changed (a later check may find it need not be rebuilt): those files. */
  private _staleFor?: Set<string>
  /** The build-info file of the parsed options (with a cache directory). */
  private _cacheFile?: string
  /** The builder's state moved since it was last written to the build-info file. */
  private _unsaved = false
  /** A file appeared or vanished: every module resolution of the old program may be wrong (a failed one would otherwise be reused). */
  private _resolutionsStale = false
  /** The config was parsed (again) since the last check began: a revert of that check must parse it again too. */
  private _parsedSinceCheck = true
  /**
   * The state before the last check (the builder's state without its
   * program, the files and diagnostics it reported), so a write that is
   * rolled back byte for byte can be forgotten without checking again.
   */
  private _previous?: { builder?: TS.SemanticDiagnosticsBuilderProgram; files: Set<string>; diagnostics: TS.Diagnostic[]; reparsed: boolean }
  /** A program to reuse the structure of (the one a revert dropped): only the files that differ are looked at again. */
  private _reuse?: TS.Program
  /** The files re-checked so far by the check under way (paused, or stopped and not reverted yet). */
  private _checking?: string[]

  constructor(
    private readonly ts: typeof TS,
    readonly configPath: string,
    private readonly documents: DocumentCache,
    private readonly extendedConfigCache: Map<string, TS.ExtendedConfigCacheEntry>,
    /** Where build-info files are kept (the session's vault), or none: every first check is cold. */
    private readonly cacheDir?: string,
    /** The signature of a referenced project's source file, from the project that owns it. */
    private readonly ownerSignature?: OwnerSignature,
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

  /** The builder's program; undefined when there is none, or after a revert (the state is kept without it). */
  get program(): TS.Program | undefined {
    return programOf(this._builder)
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
  markStale(reparse = false, changed?: readonly string[]): void {
    const known = this._stale ? this._staleFor : new Set<string>()
    this._stale = true
    this._staleFor = changed && !reparse && known ? new Set([...known, ...changed]) : undefined
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
   * Whether this stale project can keep its program and its last check: every
   * file that changed since is a referenced project's source here (never one of
   * its own files, whose diagnostics it reports), whose owner has signed the
   * file's new content in this check with the signature this builder holds for
   * it, and whose imports and references are the ones this program read.
   * Rebuilt, the program would find the file's shape unchanged and re-check
   * none of its own files: its diagnostics cannot change (a body-only
   * edit of a build project's file, read by a project's other programs).
   * Then it is no longer stale, and keeps the file's earlier tree until
   * something else makes it rebuild; its builder sees the file's new content then.
   */
  keepsThroughOwners(owner: (path: string) => TsProject | undefined): boolean {
    const changed = this._staleFor
    const program = this.program as RedirectAwareProgram | undefined
    const held = stateOf(this._builder)?.fileInfos
    const compute = (this.ts as typeof TS & { computeSignatureWithDiagnostics?: ComputeSignature }).computeSignatureWithDiagnostics
    const host = this._host
    if (!this._stale || !changed?.size || !program?.isSourceOfProjectReferenceRedirect || !held || !compute || !host || !this._parsed || this._resolutionsStale) return false
    for (const path of changed) {
      const before = program.getSourceFile(path)
      if (!before || before.isDeclarationFile || !program.isSourceOfProjectReferenceRedirect(before.fileName)) return false
      const signer = owner(path)
      const now = signer?.program?.getSourceFile(path)
      const signature = now && signer!.signatureOf(now)
      if (signature === undefined || !sameReferences(before, now!)) return false
      // What this builder held is the hash of the owner's signature it was handed (`signForeignFilesByOwner`).
      if (held.get((before as TS.SourceFile & { resolvedPath?: string }).resolvedPath ?? path)?.signature !== compute(program, before,
        `owner:${signature}`, host, undefined)) return false
    }
    this._stale = false
    this._staleFor = undefined
    return true
  }

  /**
   * The declaration signature this project's builder holds for `sf`, when
   * it is one of its own root files at the same content (else undefined).
   */
  signatureOf(sf: TS.SourceFile): string | undefined {
    const path = resolve(sf.fileName)
    if (!this._roots.has(path) || this._stale) return undefined
    const info = stateOf(this._builder)?.fileInfos?.get((sf as TS.SourceFile & { resolvedPath?: string }).resolvedPath ?? path)
    const version = (sf as TS.SourceFile & { version?: string }).version
    return info?.signature !== undefined && version !== undefined && info.version === version ? info.signature : undefined
  }

  /**
   * Bring the program up to date and return its diagnostics (config, options,
   * global, and syntactic + semantic of its own files) and how many files
   * were re-checked. A project without files reports its config diagnostics only.
   */
  check(): ProjectCheck {
    const steps = this.checking()
    for (;;) {
      const step = steps.next()
      if (step.done) return step.value
    }
  }

  /**
   * {@link check} in steps. With `changed` (absolute paths a write touched),
   * the files most likely to break are checked first — the changed files of
   * this program, then their direct importers, then the rest in the
   * builder's order — and the check pauses (yields) after each file whose
   * diagnostics include one its last check did not report for that file
   * (the changed files are checked together before a pause): a
   * caller that knows the write is worse stops there (the project is then
   * half-checked: {@link revert} puts it back). Without `changed`: no pause.
   */
  *checking(changed?: ReadonlySet<string>): Generator<TsPause, ProjectCheck, void> {
    const ts = this.ts
    // The config is parsed again for this check (a file was created or deleted): a revert must parse it again too.
    const parsed = this.parsed
    // Parsed again for this check (a file was created or deleted; possibly before it, for the project's references).
    const reparsed = this._parsedSinceCheck
    this._parsedSinceCheck = false
    this._stale = false
    this._staleFor = undefined
    if (!parsed.fileNames.length) {
      this._builder = undefined
      this._files = new Set()
      this._diagnostics = [...this._configErrors]
      return { diagnostics: this._diagnostics, rechecked: [], restored: false }
    }
    let signatures: ProjectCheck['signatures']
    const host = this._host ??= this.createHost(parsed.options)
    let old = this._builder
    let restored = false
    if (!old) {
      old = this.readCache(host)
      restored = !!old
      // No earlier state: start from an empty program's, so that every file's declaration
      // signature is computed now and a body-only edit later re-checks that file alone
      // (from no state at all, TypeScript takes file versions as signatures and the first
      // edit of each file re-checks everything that imports it).
      old ??= ts.createSemanticDiagnosticsBuilderProgram([], parsed.options, host)
    }
    // The program gets a host of its own: one that reads referenced sources overrides its host's
    // `realpath` for good (TypeScript keeps it for the checker) with a closure over the program. On
    // the shared host — which the builders keep too — each program kept the one before it, and its
    // type-checker, alive (memory growing with each write).
    const created = ts.createProgram({
      rootNames: parsed.fileNames, options: parsed.options, host: Object.create(host) as RedirectingHost, projectReferences: parsed.projectReferences,
      configFileParsingDiagnostics: this._configErrors, oldProgram: this._reuse ?? programOf(old),
    })
    this.signForeignFilesByOwner(created as RedirectAwareProgram)
    // Which exports of the written files changed, read from the program before the write while it is still held.
    const before = changed ? programOf(old) : undefined
    const suspects = before ? [...changed!].flatMap(path => {
      const now = created.getSourceFile(path)
      return now ? changedExports(ts, before.getSourceFile(path), now) : []
    }) : []
    const builder = this._builder = ts.createSemanticDiagnosticsBuilderProgram(created, host, old, this._configErrors)
    // The state before this check is kept without its program (and type-checker), for `revert`; a
    // TypeScript that cannot drop a builder's program keeps none (two checkers would double the memory).
    const releasable = old as ReleasableBuilder
    this._previous = releasable.releaseProgram && releasable.getProgramOrUndefined ? { builder: old, files: this._files,
      diagnostics: this._diagnostics, reparsed } : undefined
    releasable.releaseProgram?.()
    this._reuse = undefined
    this._resolutionsStale = false
    const program = builder.getProgram() as RedirectAwareProgram
    const foreign = (sf: TS.SourceFile) => !!program.isSourceOfProjectReferenceRedirect?.(sf.fileName)
    const rechecked: string[] = []
    // A paused check reports what it has checked so far.
    this._checking = rechecked
    const worse = changed && !restored && this._previous ? this.worseThanBefore(this._previous.diagnostics) : undefined
    const looked = new Set<TS.SourceFile>()
    if (worse) {
      // The files most likely to break first: what the write changed (all of them, before a pause:
      // the model sees every new error in what it wrote), then each file that imports them. The
      // program caches each file's diagnostics, so the builder's pass below does not check them again.
      const { written, importers } = this.likelyToBreak(program, builder, changed!, foreign, suspects)
      const own: TS.Diagnostic[] = []
      let worseOwn = false
      for (const sf of written) {
        looked.add(sf)
        rechecked.push(resolve(sf.fileName))
        const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]
        own.push(...diagnostics)
        worseOwn = worse(sf, diagnostics) || worseOwn
      }
      if (worseOwn) yield { diagnostics: own }
      // The importers only when a written file's declaration signature changed: otherwise the builder
      // re-checks none of them (a body-only edit would re-check every importer).
      const reshaped = written.some(sf => this.signatureChanged(program, builder, host, sf))
      signatures = { written: written.map(sf => resolve(sf.fileName)), kept: !reshaped }
      for (const sf of reshaped ? importers : []) {
        looked.add(sf)
        rechecked.push(resolve(sf.fileName))
        const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]
        if (worse(sf, diagnostics)) yield { diagnostics }
      }
    }
    for (let next; (next = builder.getSemanticDiagnosticsOfNextAffectedFile(undefined, foreign));) {
      const affected = next.affected
      if ((affected as TS.SourceFile).kind !== ts.SyntaxKind.SourceFile) {
        for (const sf of (affected as TS.Program).getSourceFiles()) if (!foreign(sf)) rechecked.push(resolve(sf.fileName))
        continue
      }
      const sf = affected as TS.SourceFile
      if (looked.has(sf)) continue
      rechecked.push(resolve(sf.fileName))
      if (!worse) continue
      const diagnostics = [...builder.getSyntacticDiagnostics(sf), ...next.result]
      if (worse(sf, diagnostics)) yield { diagnostics }
    }
    this._checking = undefined
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
    this._unsaved = true
    if (rechecked.length >= COMPACT_AFTER) this.dropChecker(program, host)
    return { diagnostics, rechecked, restored, ...(signatures ? { signatures } : {}) }
  }

  /**
   * Keep the builder's state over a program of the same structure that has
   * checked nothing, and let the checked program go with its type-checker:
   * the next check builds a new program (and type-checker) anyway, and needs
   * of the old one only its files and module resolutions. A check that
   * re-checked many files leaves a type-checker full of types (hundreds of
   * megabytes) that would otherwise stay until the project's next rebuild. The state is the same (every file at the same
   * version: nothing to re-check); what it costs is a program reusing the
   * structure and a builder state over it.
   */
  private dropChecker(program: TS.Program, host: RedirectingHost): void {
    const builder = this._builder as ReleasableBuilder | undefined
    if (!builder?.releaseProgram) return
    const parsed = this.parsed
    const skeleton = this.ts.createProgram({
      rootNames: parsed.fileNames, options: parsed.options, host: Object.create(host) as RedirectingHost, projectReferences: parsed.projectReferences,
      configFileParsingDiagnostics: this._configErrors, oldProgram: program,
    })
    this.signForeignFilesByOwner(skeleton as RedirectAwareProgram)
    this._builder = this.ts.createSemanticDiagnosticsBuilderProgram(skeleton, host, builder, this._configErrors)
    builder.releaseProgram()
  }

  /** Files re-checked so far by a check that is paused (or was stopped); undefined when no check is under way. */
  get checkingSoFar(): readonly string[] | undefined {
    return this._checking
  }

  /**
   * Whether a file's errors and warnings now include one the last check did
   * not report for it (by code and message, as a multiset: positions move
   * with the code around them).
   */
  private worseThanBefore(before: readonly TS.Diagnostic[]): (sf: TS.SourceFile, now: readonly TS.Diagnostic[]) => boolean {
    const ts = this.ts
    const counted = (d: TS.Diagnostic) => d.category === ts.DiagnosticCategory.Error || d.category === ts.DiagnosticCategory.Warning
    const key = (d: TS.Diagnostic) => `${d.code}\u0000${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    const byFile = new Map<string, Map<string, number>>()
    for (const d of before) {
      if (!d.file || !counted(d)) continue
      const file = resolve(d.file.fileName)
      const counts = byFile.get(file) ?? new Map<string, number>()
      counts.set(key(d), (counts.get(key(d)) ?? 0) + 1)
      byFile.set(file, counts)
    }
    return (sf, now) => {
      const budget = new Map(byFile.get(resolve(sf.fileName)))
      for (const d of now) {
        if (!counted(d)) continue
        const left = budget.get(key(d)) ?? 0
        if (left <= 0) return true
        budget.set(key(d), left - 1)
      }
      return false
    }
  }

  /**
   * Whether `sf`'s declaration signature differs from the one the builder
   * holds for it (from before the write): computed as the builder will
   * compute it (the same declaration emit, hashed the same way), before the
   * builder does. True when it cannot tell (no signature held, or a
   * TypeScript without the function): the importers are then checked first.
   */
  private signatureChanged(program: TS.Program, builder: TS.SemanticDiagnosticsBuilderProgram, host: TS.CompilerHost, sf: TS.SourceFile): boolean {
    const compute = (this.ts as typeof TS & { computeSignatureWithDiagnostics?: ComputeSignature }).computeSignatureWithDiagnostics
    const held = stateOf(builder)?.fileInfos?.get((sf as TS.SourceFile & { resolvedPath?: string }).resolvedPath ?? resolve(sf.fileName))?.signature
    if (!compute || held === undefined || held === (sf as TS.SourceFile & { version?: string }).version) return true
    let now: string | undefined
    const emit = program.emit as ProgramEmit
    emit.call(program, sf, (name, text, _bom, _onError, _sources, data) => {
      if (/\.d\.[cm]?ts$/.test(name)) now = compute(program, sf, text, host, data)
    }, undefined, this.signatureEmit, undefined, true)
    return now !== held
  }

  /** The `emitOnly` argument the builder passes for a signature: `EmitOnly.BuilderSignature` from TypeScript 5.6 on, `true` (declarations only) before. */
  private get signatureEmit(): boolean | number {
    const [major = 0, minor = 0] = this.ts.versionMajorMinor.split('.').map(Number)
    return major > 5 || major === 5 && minor >= 6 ? BUILDER_SIGNATURE : true
  }

  /** This program's own files among `changed`, and the other files that import them directly (the builder's reference map). */
  private likelyToBreak(program: TS.Program, builder: TS.SemanticDiagnosticsBuilderProgram, changed: ReadonlySet<string>,
    foreign: (sf: TS.SourceFile) => boolean, suspects: readonly string[]): { written: TS.SourceFile[]; importers: TS.SourceFile[] } {
    const own = (sf: TS.SourceFile | undefined): sf is TS.SourceFile => !!sf && !sf.isDeclarationFile && !foreign(sf)
    // In the program's order, as a whole check reports them.
    const written = program.getSourceFiles().filter(sf => own(sf) && changed.has(resolve(sf.fileName)))
    const referenced = stateOf(builder)?.referencedMap
    const importers = new Set<TS.SourceFile>()
    for (const sf of written) {
      const path = (sf as TS.SourceFile & { resolvedPath?: string }).resolvedPath ?? sf.fileName
      for (const importer of referenced?.getKeys(path)?.keys() ?? []) {
        const next = program.getSourceFileByPath(importer as TS.Path)
        if (own(next) && !written.includes(next)) importers.add(next)
      }
    }
    // Those that mention an export whose declaration changed first: a broken use of it is found without checking
    // the importers before it in the program's order.
    const first = suspects.length ? [...importers].filter(sf => mentionsAny(sf.text, suspects)) : []
    return { written, importers: [...new Set([...first, ...importers])] }
  }

  /**
   * A referenced project's source file is signed with its owner's signature
   * instead of a declaration emit of it in this program: its shape here is
   * its declaration output in its own project — what `tsc -b` reads from the
   * reference's `.d.ts` — and the owner, checked first, has computed it
   * already. Without it every dependent program emits the declarations of
   * the referenced sources again, each in a type-checker of its own (at the
   * first check, and for the changed file and its importers at each
   * export-changing edit). A file the owner holds no signature for (not its
   * root, another content) is emitted as before.
   */
  private signForeignFilesByOwner(program: RedirectAwareProgram): void {
    const owner = this.ownerSignature
    if (!owner || !program.isSourceOfProjectReferenceRedirect) return
    const emit = program.emit.bind(program) as ProgramEmit
    const signed: ProgramEmit = (sourceFile, writeFile, cancellationToken, emitOnly, ...rest) => {
      if (emitOnly === BUILDER_SIGNATURE && sourceFile && writeFile && program.isSourceOfProjectReferenceRedirect!(sourceFile.fileName)) {
        const signature = owner(sourceFile)
        if (signature !== undefined) {
          // The builder hashes what it is given as the declaration text: the owner's signature stands for it.
          writeFile(sourceFile.fileName.replace(/\.[cm]?[jt]sx?$/, '') + '.d.ts', `owner:${signature}`, false, undefined, [sourceFile])
          return { emitSkipped: false, diagnostics: [] }
        }
      }
      return emit(sourceFile, writeFile, cancellationToken, emitOnly, ...rest)
    }
    program.emit = signed as TS.Program['emit']
  }

  /**
   * Forget the last check: the files it saw are back, byte for byte, to what
   * the check before it saw (a rollback). The builder state, files and
   * diagnostics of before come back; the next check rebuilds the program
   * reusing the dropped one's structure, finds every file at the version the
   * state knows, and re-checks nothing. False when there is nothing to revert to.
   */
  revert(): boolean {
    const previous = this._previous
    this._checking = undefined
    if (!previous) return false
    this._previous = undefined
    this._reuse = programOf(this._builder)
    this._builder = previous.builder
    this._files = previous.files
    this._diagnostics = previous.diagnostics
    this._stale = true
    this._staleFor = undefined
    this._unsaved = true
    // The root files (and every module resolution) as the restored files are now.
    if (previous.reparsed) this.markStale(true)
    return true
  }

  /** A state moved since its last write that cannot be written as it is: reverted, so without a program until the next check. */
  get unsavedWithoutProgram(): boolean {
    return this._unsaved && !!this._builder && !programOf(this._builder) && !!this._cacheFile
  }

  /**
   * Write the builder's state to its build-info file (atomically), if it
   * moved since the last write; older build-info files of this tsconfig are
   * removed. True when a file was written.
   */
  persist(): boolean {
    const file = this._cacheFile
    const builder = this._builder
    // A reverted state has no program to write it with: it is written after the next check.
    if (!this._unsaved || !builder || !programOf(builder) || !file) return false
    // The cache directory's parent is the vault: created as every vault is (its `.gitignore` keeps it out of git).
    ensureVault(dirname(dirname(file)))
    mkdirSync(dirname(file), { recursive: true })
    // A write cut short (a worker terminated mid-way) leaves its temp file; the next one must not trip on it.
    rmSync(atomicTempPath(file), { force: true })
    let written = false
    builder.emit(undefined, (name, text) => {
      if (resolve(name) !== file) return
      writeFileAtomicSync(file, text)
      written = true
    })
    this._unsaved = false
    const prefix = `${basename(file).split('-')[0]}-`
    for (const f of readdirSync(dirname(file))) {
      if (f.startsWith(prefix) && f.endsWith('.tsbuildinfo') && f !== basename(file)) rmSync(join(dirname(file), f), { force: true })
    }
    return written
  }

  /** The builder state of the build-info file, when there is one for this TypeScript, these options and this suite. */
  private readCache(host: TS.CompilerHost): TS.SemanticDiagnosticsBuilderProgram | undefined {
    if (!this._cacheFile) return undefined
    try {
      // The TypeScript version is checked by readBuilderProgram too; file versions are content hashes, so a file changed since is re-checked.
      return this.ts.readBuilderProgram(this.parsed.options, host) as TS.SemanticDiagnosticsBuilderProgram | undefined
    } catch {
      // Unreadable or from an incompatible writer: a cold check.
      return undefined
    }
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
      // Which importers the builder re-checks after an edit follows each file's declaration
      // output: options that hide part of it (`@internal` exports under stripInternal) or limit
      // the re-check to direct importers would hide importers' new errors. Neither changes a
      // diagnostic of a full check.
      this._parsed = { ...parsed, options: { ...parsed.options, stripInternal: false, assumeChangesOnlyAffectDirectDependencies: false } }
      this._configErrors = [...errors, ...parsed.errors]
    }
    const extended = (this._parsed.options.configFile as (TS.TsConfigSourceFile & { extendedSourceFiles?: string[] }) | undefined)?.extendedSourceFiles ?? []
    this._configFiles = new Set([resolve(this.configPath), ...extended.map(f => resolve(f))])
    if (this.cacheDir && this._parsed.fileNames.length) {
      // One build-info file per tsconfig, TypeScript version and option set: any change of them starts cold.
      const key = sha1(`${CACHE_FORMAT}\u0000${this.ts.version}\u0000${plainOptions(this._parsed.options)}`).slice(0, 16)
      this._cacheFile = join(resolve(this.cacheDir), `${sha1(resolve(this.configPath)).slice(0, 16)}-${key}.tsbuildinfo`)
      this._parsed.options = { ...this._parsed.options, incremental: true, tsBuildInfoFile: this._cacheFile }
    } else {
      this._cacheFile = undefined
    }
    this._roots = new Set(this._parsed.fileNames.map(f => resolve(f)))
    this._host = undefined
    this._stale = true
    this._staleFor = undefined
    this._parsedSinceCheck = true
  }

  private createHost(options: TS.CompilerOptions): RedirectingHost {
    const host: RedirectingHost = this.documents.host(options)
    host.useSourceOfProjectReferenceRedirect = () => true
    // Without it, a program reuses an unchanged file's failed resolution of a module that has just been created (or restored).
    host.hasInvalidatedResolutions = () => this._resolutionsStale
    return host
  }
}
