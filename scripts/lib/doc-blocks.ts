import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import { findFencedBlocks } from './markdown.ts'
import { findModulesRoot, listDocFiles, listPackages, relPath } from './workspace.ts'

/** Info-string flag that exempts a ```ts block from type-checking. */
export const OPT_OUT_FLAG = 'ignore-check'
/** Share of opted-out blocks above which the check fails. */
export const MAX_OPT_OUT_RATIO = 0.2

export interface DocBlock {
  /** Markdown file relative to the root. */
  file: string
  /** Line of the opening fence. */
  fenceLine: number
  code: string
  optOut: boolean
}

export interface BlockDiagnostic {
  block: DocBlock
  /** 1-based line inside the block (the fence line + `line` is the line in the file). */
  line: number
  /** 1-based column. */
  column: number
  code: number
  message: string
}

export interface DocTypecheckOptions {
  root: string
  maxOptOutRatio?: number
}

export interface DocTypecheckReport {
  ok: boolean
  lines: string[]
  blocks: DocBlock[]
  optOuts: number
  diagnostics: BlockDiagnostic[]
  /** Diagnostics not tied to one block (compiler options, global). */
  general: string[]
}

/** Every ```ts (or ```typescript) block in README.md, docs/**\/*.md and packages/*\/README.md. */
export function collectTsBlocks(root: string): DocBlock[] {
  const blocks: DocBlock[] = []
  for (const file of listDocFiles(root)) {
    const rel = relPath(root, file)
    for (const block of findFencedBlocks(readFileSync(file, 'utf8'))) {
      if (block.lang !== 'ts' && block.lang !== 'typescript') continue
      blocks.push({ file: rel, fenceLine: block.fenceLine, code: block.content, optOut: block.flags.includes(OPT_OUT_FLAG) })
    }
  }
  return blocks
}

/** `<file> (block at line N, +l:c) message` */
function formatDiagnostic(d: BlockDiagnostic): string {
  const message = d.message.split('\n').join('\n    ')
  return `${d.block.file} (block at line ${d.block.fenceLine}, +${d.line}:${d.column}) TS${d.code}: ${message}`
}

export function optOutLine(optOuts: number, total: number): string {
  const percent = total === 0 ? 0 : (optOuts / total) * 100
  return `opt-out: ${optOuts}/${total} blocks (${Number.isInteger(percent) ? percent : percent.toFixed(1)}%)`
}

/**
 * Type-check every doc block as its own module, in one in-memory program
 * against the packages' sources: bare imports of workspace packages map to
 * their `exports` entries, everything else resolves through the repository's
 * node_modules, with the root tsconfig's compiler options.
 */
export function typecheckDocs(options: DocTypecheckOptions): DocTypecheckReport {
  const root = resolve(options.root)
  const maxRatio = options.maxOptOutRatio ?? MAX_OPT_OUT_RATIO
  const blocks = collectTsBlocks(root)
  const checked = blocks.filter(b => !b.optOut)
  const optOuts = blocks.length - checked.length
  const { diagnostics, general } = checked.length ? checkBlocks(root, checked) : { diagnostics: [], general: [] }

  const lines: string[] = []
  for (const d of diagnostics) lines.push(formatDiagnostic(d))
  for (const g of general) lines.push(g)
  lines.push(optOutLine(optOuts, blocks.length))
  const ratioOk = blocks.length === 0 || optOuts / blocks.length <= maxRatio
  if (!ratioOk) lines.push(`too many opted-out blocks: above ${maxRatio * 100}% (make the sketches compile, or cut them)`)
  const failing = new Set(diagnostics.map(d => d.block)).size
  lines.push(`doc-typecheck: ${checked.length} blocks checked, ${failing} failing`)
  const ok = diagnostics.length === 0 && general.length === 0 && ratioOk
  lines.push(ok ? 'doc-typecheck: ok' : 'doc-typecheck: FAILED')
  return { ok, lines, blocks, optOuts, diagnostics, general }
}

/** Where the virtual block modules live: a directory that does not exist, inside the tree whose node_modules serve imports. */
function virtualDir(root: string): string {
  return join(findModulesRoot(root) ?? root, '.doc-typecheck-blocks')
}

/** `paths` that map each workspace package's import specifiers to its source entry. */
export function workspacePaths(root: string): Record<string, string[]> {
  const paths: Record<string, string[]> = {}
  for (const pkg of listPackages(root)) for (const [specifier, file] of pkg.entries) paths[specifier] = [file]
  return paths
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json')
  let options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    esModuleInterop: true,
  }
  if (existsSync(configPath)) {
    const read = ts.readConfigFile(configPath, ts.sys.readFile)
    if (!read.error) options = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath).options
  }
  return {
    ...options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    moduleDetection: ts.ModuleDetectionKind.Force,
    paths: { ...options.paths, ...workspacePaths(root) },
  }
}

function checkBlocks(root: string, blocks: DocBlock[]): { diagnostics: BlockDiagnostic[]; general: string[] } {
  const dir = virtualDir(root)
  const byFile = new Map<string, DocBlock>()
  const texts = new Map<string, string>()
  for (const block of blocks) {
    const name = join(dir, `${block.file.replace(/[^A-Za-z0-9._-]+/g, '__')}__L${block.fenceLine}.ts`)
    byFile.set(name, block)
    texts.set(name, block.code)
  }
  const options = compilerOptions(root)
  const host = ts.createCompilerHost(options, true)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = f => texts.has(f) || fileExists.call(host, f)
  host.readFile = f => texts.get(f) ?? readFile.call(host, f)
  host.getSourceFile = (f, language, onError, shouldCreate) => {
    const text = texts.get(f)
    return text !== undefined ? ts.createSourceFile(f, text, language, true) : getSourceFile.call(host, f, language, onError, shouldCreate)
  }
  const program = ts.createProgram({ rootNames: [...texts.keys()], options, host })

  const diagnostics: BlockDiagnostic[] = []
  for (const [name, block] of byFile) {
    const source = program.getSourceFile(name)
    if (!source) continue
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line, character } = source.getLineAndCharacterOfPosition(d.start ?? 0)
      diagnostics.push({ block, line: line + 1, column: character + 1, code: d.code, message: ts.flattenDiagnosticMessageText(d.messageText, '\n') })
    }
  }
  const general = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
    .map(d => `doc-typecheck: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  return { diagnostics, general }
}
