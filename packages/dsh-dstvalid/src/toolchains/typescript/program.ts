import { basename, join, relative, resolve, sep } from 'node:path'
import { isInside } from 'dsh-common'
import type * as TS from 'typescript'
import { findImporters, type ImpactList, type ImportEdge } from '../../impact.ts'
import { DocumentCache, statOf } from './documents.ts'
import { programImports } from './imports.ts'
import { type OwnerSignature, type ProjectCheck, TsProject } from './project.ts'
import { workspacePackageDirs } from '../js/workspace-packages.ts'
import type { TsDiagnostic } from '../runner.ts'

/** Source files a program can hold. */
const SOURCE = /\.[cm]?[jt]sx?$/

/** One diagnostic as the checker reports it (plain data: it crosses a worker boundary). */
export interface TsCheckResult {
  diagnostics: TsDiagnostic[]
  /** Files whose semantic diagnostics were recomputed (the rest came from the warm program or the build-info cache). */
  rechecked: number
  /** Per project whose program was rebuilt (workspace-relative tsconfig): the files it re-checked (workspace-relative), in checking order. */
  recheckedFiles: Record<string, string[]>
  /** Projects whose program started from the build-info cache in this check (workspace-relative tsconfigs). */
  restored: string[]
  /** Files in the programs (each counted once). */
  files: number
  /**
   * The check paused at a file with a new error (`check(…, { pause: true })`):
   * `diagnostics` are those of the files it has checked so far (part of the
   * whole: every one of them is in the full result too), `rechecked` and
   * `recheckedFiles` what it has checked so far.
   */
  paused?: true
  durationMs: number
  tsVersion: string
  /** Workspace-relative tsconfig paths of the programs checked. */
  projects: string[]
  /** Changed source files that are in no program (workspace-relative): parsed for syntax errors only. */
  orphans: string[]
  /** Parsed trees held by the shared document cache (a file several programs read is one tree). */
  documents: number
  /** Files of every program, a file counted once per program that reads it. */
  programFiles: number
  /**
   * Every file the write changed is a script some program owns, and every program that owns
   * one found its declaration signature — what its importers can see of it — unchanged (ADR
   * 0033): the absolute tsconfig paths of the programs that own all of them (the compiler
   * options the signatures hold for). Absent: a signature changed, or the check could not tell.
   */
  declarationsKept?: string[]
}

/**
 * The tsconfigs of the programs that own every file of `changed`, when each file is an own file
 * of some program checked for the write and every program holding it compared its declaration
 * signature and found it unchanged; undefined otherwise (one changed, a program could not tell,
 * a file in no program or only another program's source, nothing changed).
 */
function declarationsKept(changed: readonly string[], checked: ReadonlyMap<TsProject, ProjectCheck>): string[] | undefined {
  const paths = changed.map(p => resolve(p))
  if (!paths.length) return undefined
  const owners: string[] = []
  for (const path of paths) {
    let owned = false
    for (const [project, check] of checked) {
      if (!project.files.has(path)) continue
      // A program that read the file and compared nothing (no earlier state) cannot vouch for it.
      if (!check.signatures) return undefined
      if (!check.signatures.written.includes(path)) continue
      if (!check.signatures.kept) return undefined
      owned = true
    }
    if (!owned) return undefined
  }
  for (const [project, check] of checked) if (check.signatures && paths.every(p => check.signatures!.written.includes(p))) owners.push(project.configPath)
  return owners
}

/**
 * A warm, incremental type-checker for a workspace's tsconfig project graph,
 * on the workspace's own `typescript` module: the configured tsconfig and
 * every project its `references` reach (a solution file has no program of
 * its own), plus the tsconfig of every workspace package the graph does not
 * cover. Each project is checked with its own compiler options, as
 * `tsc -b --noEmit` would report it; parsed files are shared between the
 * programs (one {@link DocumentCache}), and a project none of whose files
 * changed answers from its last check. A changed file in no program is
 * still parsed, so a syntax error is always caught. Synchronous and
 * CPU-bound: run it in a worker (see `worker.ts`) to keep an event loop responsive.
 */
export interface TsCheckerOptions {
  /** Directory of the build-info cache, inside a vault (its parent: created as a vault, with its `.gitignore`); outside the workspace's own files. */
  cacheDir?: string
}

export class TsProgramChecker {
  private readonly _documents: DocumentCache
  private readonly _extendedConfigCache = new Map<string, TS.ExtendedConfigCacheEntry>()
  private _projects = new Map<string, TsProject>()
  private _discovered = false
  /** This check found the projects (the first check, or a config file changed). */
  private _rediscovered = false
  /** Files in no program that a check has parsed: parsed again on every check while they stay outside. */
  private readonly _orphans = new Set<string>()
  /**
   * The projects the last check rebuilt (what `revert` undoes); undefined when it found the projects again (a
   * config changed): nothing to revert to exactly.
   */
  private _lastRebuilt?: TsProject[] = []
  /** A check answered part-way (`pause`), waiting for {@link resume}. */
  private _paused?: Generator<TsCheckResult, TsCheckResult, void>
  /** The import graph, recomputed when a builder program changes. */
  private _edges?: { builders: TS.SemanticDiagnosticsBuilderProgram[]; edges: ImportEdge[] }

  /**
   * `options.cacheDir`: where build-info files are kept (the session's
   * vault), so that the first check after a restart re-checks only what
   * changed since; absent: no cache, every first check is cold.
   */
  constructor(private readonly ts: typeof TS, readonly root: string, readonly configPath: string, private readonly options: TsCheckerOptions = {}) {
    this._documents = new DocumentCache(ts)
  }

  get version(): string {
    return this.ts.version
  }

  /** Workspace-relative tsconfig paths of the graph's projects that have a program, in discovery order. */
  get projects(): string[] {
    return [...this._projects.values()].filter(p => p.hasProgram).map(p => this.rel(p.configPath))
  }

  /**
   * Diagnostics of every project, as `tsc -b --noEmit` reports them (a single
   * project: as `tsc --noEmit -p <config>`). `changed`: absolute paths a write
   * touched (a hint: every parsed file is re-validated by mtime+size anyway,
   * so out-of-band edits are seen too).
   *
   * `pause`: the check may answer before it is done — `paused: true`, the
   * diagnostics of the files checked so far — each time a re-checked file
   * has an error its last check did not report, the write's changed files
   * and their direct importers checked first. {@link resume} goes on; any
   * other call stops it there (the projects it began are reverted, so
   * nothing of the half-finished check is kept).
   */
  check(changed: readonly string[] = [], options: { pause?: boolean } = {}): TsCheckResult {
    this.stop()
    return this.step(this.checking(changed, !!options.pause))
  }

  /** Go on with the paused check (see {@link check}'s `pause`). */
  resume(): TsCheckResult {
    if (!this._paused) throw new Error('no paused type-check to resume')
    return this.step(this._paused)
  }

  /** Whether a check is paused (answered part-way, waiting for {@link resume}). */
  get paused(): boolean {
    return !!this._paused
  }

  private step(run: Generator<TsCheckResult, TsCheckResult, void>): TsCheckResult {
    this._paused = undefined
    const next = run.next()
    if (!next.done) this._paused = run
    return next.value
  }

  /**
   * A paused check that will not be resumed is reverted: every project it
   * began returns to its state from before it; the projects it had not
   * reached stay marked for a rebuild. The next check then sees the write's
   * files (or the restored ones) as any change.
   */
  private stop(): void {
    if (this._paused) this.revert()
  }

  private *checking(changed: readonly string[], pause: boolean): Generator<TsCheckResult, TsCheckResult, void> {
    const started = performance.now()
    this._rediscovered = false
    const projects = this.refresh(changed)
    let rechecked = 0
    const recheckedFiles: Record<string, string[]> = {}
    const restored: string[] = []
    const seen = new Set<string>()
    const all: { d: TS.Diagnostic; project: TsProject }[] = []
    const files = new Set<string>()
    // A new syntax error in a changed file decides the verdict alone: answered from the parse, nothing rebuilt (the projects stay stale).
    const syntax = this._rediscovered ? undefined : this.newSyntaxErrors(changed, projects)
    // The projects this check begins (what `revert` undoes); none to revert to exactly when the graph was found again.
    const begun: TsProject[] | undefined = this._lastRebuilt = this._rediscovered ? undefined : []
    // Referenced projects first: a dependent takes its referenced sources' signatures from them.
    const checked = new Map<TsProject, ProjectCheck>()
    // A check that may pause: only against a known earlier state (not when the graph was found again).
    const likely = pause && begun ? new Set(changed.map(p => resolve(p))) : undefined
    const found: { d: TS.Diagnostic; project: TsProject }[] = []
    if (!syntax) {
      for (const project of this.referencesFirst(projects)) {
        if (!project.stale) continue
        // Only referenced sources changed, and their owners signed them as before: nothing it reports can change.
        if (project.keepsThroughOwners(path => this.ownerOf(project.configPath, path))) continue
        begun?.push(project)
        const steps = project.checking(likely)
        for (let step = steps.next(); ; step = steps.next()) {
          if (step.done) {
            checked.set(project, step.value)
            break
          }
          found.push(...step.value.diagnostics.map(d => ({ d, project })))
          const soFar = (p: TsProject) => checked.get(p)?.rechecked ?? p.checkingSoFar ?? []
          const partial = [...checked.keys(), project].map(p => [this.rel(p.configPath), soFar(p).map(f => this.rel(f))] as const)
          yield {
            ...this.result(started, projects, [], this.toPlain(this.unique(found), projects.filter(p => p.hasProgram).length > 1), new Set()),
            paused: true,
            rechecked: partial.reduce((n, [, f]) => n + f.length, 0),
            recheckedFiles: Object.fromEntries(partial),
          }
        }
      }
    }
    for (const project of projects) {
      const last = syntax ? project.diagnostics.filter(d => !d.file || !syntax.files.has(resolve(d.file.fileName))) : project.diagnostics
      const fresh = checked.get(project) ?? { diagnostics: last, rechecked: undefined, restored: false }
      if (fresh.rechecked) {
        rechecked += fresh.rechecked.length
        recheckedFiles[this.rel(project.configPath)] = fresh.rechecked.map(f => this.rel(f))
      }
      if (fresh.restored) restored.push(this.rel(project.configPath))
      for (const f of project.files) files.add(f)
      for (const d of fresh.diagnostics) {
        const key = this.diagnosticKey(d, project)
        if (seen.has(key)) continue
        seen.add(key)
        all.push({ d, project })
      }
    }
    const orphans = this.parseOrphans(changed, files)
    const withProgram = projects.filter(p => p.hasProgram)
    const diagnostics = [
      ...this.toPlain(all, withProgram.length > 1),
      ...this.toPlain([...orphans.diagnostics, ...syntax?.diagnostics ?? []].map(d => ({ d, project: undefined })), false),
    ]
    const kept = syntax ? undefined : declarationsKept(changed, checked)
    return { ...this.result(started, projects, orphans.files, diagnostics, files), rechecked, recheckedFiles, restored,
      ...(kept ? { declarationsKept: kept } : {}) }
  }

  /** A check's result around its diagnostics (what was re-checked is the caller's). */
  private result(started: number, projects: readonly TsProject[], orphans: string[], diagnostics: TsDiagnostic[], files: ReadonlySet<string>): TsCheckResult {
    const withProgram = projects.filter(p => p.hasProgram)
    return {
      diagnostics,
      rechecked: 0,
      recheckedFiles: {},
      restored: [],
      files: files.size,
      durationMs: Math.round(performance.now() - started),
      tsVersion: this.ts.version,
      projects: withProgram.map(p => this.rel(p.configPath)),
      orphans,
      documents: this._documents.size,
      programFiles: withProgram.reduce((n, p) => n + p.files.size, 0),
    }
  }

  /** The same diagnostic seen by two programs (a shared file, a shared options error) is one problem. */
  private diagnosticKey(d: TS.Diagnostic, project: TsProject): string {
    return `${d.file?.fileName ?? project.configPath}\u0000${d.start ?? ''}\u0000${d.code}\u0000${this.ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  }

  private unique(diagnostics: readonly { d: TS.Diagnostic; project: TsProject }[]): { d: TS.Diagnostic; project: TsProject }[] {
    const seen = new Set<string>()
    return diagnostics.filter(({ d, project }) => {
      const key = this.diagnosticKey(d, project)
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }

  /**
   * Forget the last check: every file it was told about is back, byte for
   * byte, to what the check before it saw (a rollback). The projects it
   * rebuilt return to their state from before it; the next check re-checks
   * nothing for those files. Returns how many projects were reverted.
   */
  revert(): number {
    // A check paused part-way is forgotten too: the projects it began are all it changed.
    const paused = !!this._paused
    this._paused = undefined
    let reverted = 0
    if (!this._lastRebuilt) {
      // The project graph itself was found again: the next check finds it again as the files are now.
      this._discovered = false
    }
    for (const project of this._lastRebuilt ?? []) {
      if (project.revert()) reverted++
      // A TypeScript that cannot keep the state from before: the half-checked builder goes on at
      // the next rebuild (it keeps the changed files it had not finished).
      else if (paused) project.markStale()
    }
    this._lastRebuilt = []
    this._edges = undefined
    return reverted
  }

  /**
   * Write the build-info cache of every project whose state moved since its
   * last write; returns how many files were written. `final` (the worker is
   * about to end): a state reverted since (a rolled-back write, the session's
   * last) gets its program back first — a check that re-checks nothing, the
   * files being those of the state — or it would never be written.
   */
  persist(final = false): number {
    // A half-finished check is never written.
    this.stop()
    if (final && [...this._projects.values()].some(p => p.unsavedWithoutProgram)) this.check([])
    let written = 0
    for (const project of this._projects.values()) if (project.persist()) written++
    return written
  }

  /**
   * Importers of `files` (workspace-relative) in the programs' own import
   * graph, nearest first, at most `max`. Uses the warm programs as the last
   * check left them (the accepted state), building them only if there are none.
   */
  importers(files: readonly string[], max: number): ImpactList {
    this.stop()
    let projects = [...this._projects.values()].filter(p => p.builder)
    // After a revert the builders hold their state without a program: a check finds them again (re-checking nothing).
    if (!projects.length || projects.some(p => !p.program)) {
      this.check([])
      projects = [...this._projects.values()].filter(p => p.builder)
    }
    const builders = projects.map(p => p.builder!)
    if (!this._edges || this._edges.builders.length !== builders.length || this._edges.builders.some((b, i) => b !== builders[i])) {
      const merged = new Map<string, ImportEdge>()
      for (const p of projects) {
        for (const e of programImports(this.ts, p.program!, this.root, p.host ?? this.ts.sys)) {
          const key = `${e.from}\u0000${e.to}`
          const had = merged.get(key)
          merged.set(key, had ? { ...e, typeOnly: !!had.typeOnly && !!e.typeOnly } : e)
        }
      }
      this._edges = { builders, edges: [...merged.values()] }
    }
    return findImporters(this._edges.edges, files, max)
  }

  /** `projects` ordered so that every project comes after the projects it references (transitively). */
  private referencesFirst(projects: readonly TsProject[]): TsProject[] {
    const ordered: TsProject[] = []
    const seen = new Set<TsProject>()
    const visit = (project: TsProject | undefined) => {
      if (!project || seen.has(project)) return
      seen.add(project)
      for (const ref of project.references) visit(this._projects.get(ref))
      ordered.push(project)
    }
    for (const project of projects) visit(project)
    return ordered
  }

  /** The signature of a referenced source, from a project `configPath` references (transitively) that has it as a root. */
  private ownerSignature(configPath: string): OwnerSignature {
    return sf => this.ownerOf(configPath, resolve(sf.fileName))?.signatureOf(sf)
  }

  /** The project `configPath` references (transitively, nearest first) that has `path` (absolute) as a root file. */
  private ownerOf(configPath: string, path: string): TsProject | undefined {
    const seen = new Set<string>([configPath])
    const queue = [...(this._projects.get(configPath)?.references ?? [])]
    for (let ref; (ref = queue.shift());) {
      if (seen.has(ref)) continue
      seen.add(ref)
      const project = this._projects.get(ref)
      if (!project) continue
      if (project.roots.has(path)) return project
      queue.push(...project.references)
    }
    return undefined
  }

  /** Invalidate what changed and return the projects to report, stale ones marked for a rebuild. */
  private refresh(changed: readonly string[]): TsProject[] {
    const changedAbs = changed.map(p => resolve(p))
    const dirty = this._documents.invalidate(changedAbs)
    for (const p of changedAbs) dirty.add(p)
    const projects = [...this._projects.values()]
    const configChanged = [...dirty].some(p => isConfigName(p) || projects.some(project => project.configFiles.has(p)))
    if (!this._discovered || configChanged) {
      this._extendedConfigCache.clear()
      this.discover()
      for (const project of this._projects.values()) project.markStale(true)
      return [...this._projects.values()]
    }
    // A new or deleted source file changes root sets and module resolution: glob every config again.
    const created = changedAbs.some(p => SOURCE.test(p) && projects.some(project => project.roots.has(p)) !== !!statOf(p))
    for (const project of projects) {
      if (created) project.markStale(true)
      else {
        const read = [...dirty].filter(p => project.reads(p))
        if (read.length) project.markStale(false, read)
      }
    }
    return projects
  }

  /** The projects: the configured tsconfig and its references (transitively), then uncovered workspace packages. */
  private discover() {
    const old = this._projects
    const found = new Map<string, TsProject>()
    const visit = (configPath: string) => {
      const abs = resolve(configPath)
      if (found.has(abs) || !statOf(abs)) return
      const project = old.get(abs) ?? new TsProject(this.ts, abs, this._documents, this._extendedConfigCache, this.options.cacheDir, this.ownerSignature(abs))
      found.set(abs, project)
      for (const ref of project.references) visit(ref)
    }
    visit(this.configPath)
    const covered = new Set<string>()
    for (const p of found.values()) for (const f of p.roots) covered.add(f)
    for (const dir of workspacePackageDirs(this.root)) {
      const config = join(dir, 'tsconfig.json')
      if (found.has(config) || !statOf(config)) continue
      const project = old.get(config) ?? new TsProject(this.ts, config, this._documents, this._extendedConfigCache, this.options.cacheDir,
        this.ownerSignature(config))
      project.markStale(true)
      // A package whose every file some project already checks adds nothing but cost.
      if ([...project.roots].some(f => !covered.has(f)) || project.references.length) visit(config)
    }
    this._projects = found
    this._rediscovered = true
    this._discovered = true
    this._edges = undefined
  }

  /** Syntax errors of changed (and earlier seen) source files that no program holds. */
  private parseOrphans(changed: readonly string[], inPrograms: ReadonlySet<string>): { files: string[]; diagnostics: TS.Diagnostic[] } {
    for (const p of changed) {
      const abs = resolve(p)
      if (SOURCE.test(abs) && isInside(this.root, abs) && !abs.split(sep).includes('node_modules')) this._orphans.add(abs)
    }
    const files: string[] = []
    for (const abs of [...this._orphans]) {
      if (inPrograms.has(abs) || !statOf(abs)) this._orphans.delete(abs)
      else files.push(abs)
    }
    if (!files.length) return { files: [], diagnostics: [] }
    const wanted = new Set(changed.map(c => this.rel(resolve(c))))
    return { files: files.map(f => this.rel(f)).filter(f => wanted.has(f)), diagnostics: this.syntaxErrors(files) }
  }

  /**
   * The syntax errors of changed files that a program holds, when one of
   * them is new (not among the file's diagnostics of the last check): the
   * write is worse whatever its types say, so the check answers from the
   * parse alone (a syntax error in a much-imported module would otherwise
   * wait for all its importers to be re-checked).
   */
  private newSyntaxErrors(changed: readonly string[], projects: readonly TsProject[]): { files: Set<string>; diagnostics: TS.Diagnostic[] } | undefined {
    const files = [...new Set(changed.map(p => resolve(p)))].filter(f => SOURCE.test(f) && statOf(f) && projects.some(p => p.reads(f)))
    if (!files.length) return undefined
    const diagnostics = this.syntaxErrors(files)
    const key = (d: TS.Diagnostic) => `${resolve(d.file!.fileName)}\u0000${d.code}\u0000${this.ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    const had = new Set(projects.flatMap(p => p.diagnostics.filter(d => d.file && files.includes(resolve(d.file.fileName))).map(key)))
    return diagnostics.some(d => !had.has(key(d))) ? { files: new Set(files), diagnostics } : undefined
  }

  /** Syntax errors of `files` (absolute), each parsed alone. */
  private syntaxErrors(files: readonly string[]): TS.Diagnostic[] {
    const ts = this.ts
    const options: TS.CompilerOptions = { noResolve: true, noLib: true, types: [], allowJs: true, noEmit: true, target: ts.ScriptTarget.ESNext }
    const program = ts.createProgram({ rootNames: [...files], options, host: this._documents.host(options) })
    return files.flatMap(f => {
      const sf = program.getSourceFile(f)
      return sf ? [...program.getSyntacticDiagnostics(sf)] : []
    })
  }

  private rel(abs: string): string {
    return relative(this.root, abs).split(sep).join('/')
  }

  /** Plain diagnostics; a diagnostic without a file belongs to its project's tsconfig when there are several projects. */
  private toPlain(diagnostics: readonly { d: TS.Diagnostic; project: TsProject | undefined }[], attribute: boolean): TsDiagnostic[] {
    const ts = this.ts
    const out: TsDiagnostic[] = []
    for (const { d, project } of diagnostics) {
      if (d.category !== ts.DiagnosticCategory.Error && d.category !== ts.DiagnosticCategory.Warning) continue
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
      let file = attribute && project ? this.rel(project.configPath) : ''
      let line: number | undefined
      if (d.file) {
        file = this.rel(d.file.fileName)
        if (d.start !== undefined) line = d.file.getLineAndCharacterOfPosition(d.start).line + 1
      }
      out.push({ file, line, code: d.code, category: d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning', message })
    }
    return out
  }
}

/** tsconfig*.json, jsconfig.json, package.json and pnpm-workspace.yaml change which projects exist and what they hold. */
function isConfigName(p: string): boolean {
  const name = basename(p)
  return /^[tj]sconfig.*\.json$/.test(name) || name === 'package.json' || name === 'pnpm-workspace.yaml'
}
