import { readFileSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import type { TsDiagnostic } from '../runner.ts'
import { RpcClient } from './rpc.ts'

/** A diagnostic as TypeScript 7's API sends it (positions are offsets into the file's text). */
interface ApiDiagnostic {
  fileName?: string
  pos: number
  end: number
  code: number
  /** 0 warning, 1 error, 2 suggestion, 3 message. */
  category: number
  text: string
  messageChain?: ApiDiagnostic[]
}

interface ApiProject {
  id: string
  configFileName: string
  compilerOptions: Record<string, unknown>
  rootFiles: string[]
}

interface SnapshotResponse {
  snapshot: number
  projects: ApiProject[]
}

/** What one warm check saw. */
export interface Tsc7Result {
  diagnostics: TsDiagnostic[]
  /** Source files of every opened project's program (absolute), the nodes of the import graph. */
  files: string[]
  /** The projects the server holds: config file and compiler options (as the server parsed them). */
  projects: { config: string; options: Record<string, unknown> }[]
}

/** A message and the messages chained under it. */
export interface MessageChain {
  text: string
  messageChain?: readonly MessageChain[]
}

/** `text` and its chain, as `tsc` prints a chained message (each level on its own line, indented). */
export function flattenMessage(d: MessageChain, depth = 0): string {
  let out = depth ? `\n${'  '.repeat(depth)}${d.text}` : d.text
  for (const next of d.messageChain ?? []) out += flattenMessage(next, depth + 1)
  return out
}

/**
 * A warm TypeScript 7 API server (`tsc --api --async`) holding every project
 * of a `tsc -b` graph open. Each check takes a new snapshot of the files on
 * disk and asks each project's program for its diagnostics — the ones `tsc -b`
 * reports (config, options, syntactic, semantic, global; declaration emit for
 * projects that emit declarations). Referenced projects are read from their
 * sources, so nothing is built or written. One request at a time (the
 * engine's queue guarantees it).
 */
export class Tsc7ApiServer {
  private readonly _rpc: RpcClient
  private _snapshot?: number
  private _opened = false

  constructor(tsc: readonly string[], readonly root: string, readonly configs: readonly string[]) {
    this._rpc = new RpcClient([...tsc, '--api', '--async', '--cwd', root], root)
  }

  get alive(): boolean {
    return this._rpc.alive
  }

  /** The server's pid (the leader of its process group). */
  get pid(): number | undefined {
    return this._rpc.pid
  }

  /** Diagnostics of every project as the files on disk are now. */
  async check(): Promise<Tsc7Result> {
    if (!this._opened) await this._rpc.request('initialize', null)
    const params = this._opened ? { fileChanges: { invalidateAll: true } } : { openProjects: [...this.configs] }
    const snap = await this._rpc.request<SnapshotResponse>('updateSnapshot', params)
    this._opened = true
    const previous = this._snapshot
    this._snapshot = snap.snapshot
    if (previous !== undefined) await this._rpc.request('release', { snapshot: previous }).catch(() => {})
    // In build order (referenced projects first), as `tsc -b` reports them.
    const rank = (p: ApiProject) => {
      const i = this.configs.indexOf(p.configFileName)
      return i < 0 ? this.configs.length : i
    }
    const projects = [...snap.projects].sort((a, b) => rank(a) - rank(b))
    // Every request at once: the server answers them concurrently (measured faster than one by one); results are used in order.
    const asked = projects.map(project => {
      const at = { snapshot: snap.snapshot, project: project.id }
      const options = project.compilerOptions
      const emitsDeclarations = (options.composite === true || options.declaration === true) && options.noEmit !== true
      const methods = ['getConfigFileParsingDiagnostics', 'getProgramDiagnostics', 'getSyntacticDiagnostics', 'getSemanticDiagnostics', 'getGlobalDiagnostics']
      if (emitsDeclarations) methods.push('getDeclarationDiagnostics')
      return Promise.all([
        Promise.all(methods.map(method => this._rpc.request<ApiDiagnostic[] | null>(method, at))),
        this._rpc.request<string[] | null>('getSourceFileNames', at),
      ])
    })
    // One Promise.all over everything, so a failing request never leaves the others' rejections unhandled.
    const answers = await Promise.all(asked)
    const texts = new Map<string, string | undefined>()
    const diagnostics: TsDiagnostic[] = []
    const files = new Set<string>()
    for (const [perMethod, names] of answers) {
      for (const found of perMethod) {
        for (const d of found ?? []) {
          const plain = this.toPlain(d, texts)
          if (plain) diagnostics.push(plain)
        }
      }
      for (const f of names ?? []) files.add(f)
    }
    return { diagnostics, files: [...files], projects: projects.map(p => ({ config: p.configFileName, options: p.compilerOptions })) }
  }

  /** Kill the server's process group. */
  close(): Promise<void> {
    return this._rpc.close()
  }

  private toPlain(d: ApiDiagnostic, texts: Map<string, string | undefined>): TsDiagnostic | undefined {
    if (d.category !== 0 && d.category !== 1) return undefined
    let file = ''
    let line: number | undefined
    if (d.fileName) {
      const abs = isAbsolute(d.fileName) ? d.fileName : resolve(this.root, d.fileName)
      file = relative(this.root, abs).split(sep).join('/')
      if (!texts.has(abs)) {
        try {
          texts.set(abs, readFileSync(abs, 'utf8'))
        } catch {
          // Gone since the snapshot: no line number.
          texts.set(abs, undefined)
        }
      }
      const text = texts.get(abs)
      if (text !== undefined && d.pos >= 0) line = lineAt(text, d.pos)
    }
    return { file, line, code: d.code, category: d.category === 1 ? 'error' : 'warning', message: flattenMessage(d) }
  }
}

/** 1-based line of a UTF-16 offset. */
function lineAt(text: string, pos: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) line++
  return line
}
