import { realpathSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { isInside, NotRegularFileError, PathEscapeError, realpathNearest, ReadAbortedError, readRegularText, resolveInside, toPosixRelative, writeFileAtomic, type BoundedReadOptions } from 'dsh-common'
import type { JsonSchema, ToolDefinition, ToolExecution, ToolResult } from 'dsh-tools'
import { applyEdits, EditError, type Edit } from './edits.ts'
import type { Config } from './config.ts'

/** The workspace root as a real path (paths from `resolveInside` are real). */
function workspaceRoot(exec: ToolExecution): string {
  return realpathSync(exec.session.cwd)
}

/** Resolve inside the session's workspace, or an isError result saying why. */
function contain(exec: ToolExecution, path: string): string | ToolResult {
  try {
    return resolveInside(exec.session.cwd, path)
  } catch (error) {
    if (error instanceof PathEscapeError) return { content: `refused: ${error.message}; nothing was touched`, isError: true }
    throw error
  }
}

/** {@link contain}, and refused inside the session's vault: dsh's records are the harness's to write, not the agent's. */
function containWritable(exec: ToolExecution, path: string): string | ToolResult {
  const abs = contain(exec, path)
  if (typeof abs !== 'string') return abs
  if (isInside(realpathNearest(exec.session.vault), abs)) return { content: `refused: ${path} is inside dsh's vault (the harness's own records); nothing was touched`, isError: true }
  return abs
}

/**
 * A regular file's text (bounded and abortable: a FIFO or a device is
 * refused, never waited on), or an isError result saying why it was not read.
 */
async function readText(abs: string, path: string, options: BoundedReadOptions): Promise<string | ToolResult> {
  try {
    return await readRegularText(abs, options)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { content: `${path}: no such file`, isError: true }
    if (error instanceof NotRegularFileError || error instanceof ReadAbortedError) return { content: `${path}: ${error.message}; nothing was read`, isError: true }
    throw error
  }
}

/** A file's real path and text, or an isError result: outside the workspace, no such file, not a regular file. */
async function readContained(exec: ToolExecution, path: string, maxBytes?: number, forWrite = false): Promise<{ abs: string; text: string } | ToolResult> {
  const abs = (forWrite ? containWritable : contain)(exec, path)
  if (typeof abs !== 'string') return abs
  const text = await readText(abs, path, { maxBytes, signal: exec.signal })
  return typeof text === 'string' ? { abs, text } : text
}

async function writeText(abs: string, text: string): Promise<void> {
  await mkdir(dirname(abs), { recursive: true })
  await writeFileAtomic(abs, text)
}

interface PathArgs { path: string }
interface WriteArgs extends PathArgs { content: string }
interface EditArgs extends PathArgs, Edit {}
interface MultiEditArgs { edits: (Edit & { path: string })[] }

/** Arguments that are exactly these properties, every one required. */
function exactly(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false }
}

const pathArg = { path: { type: 'string' } }
const editArgs = {
  ...pathArg,
  old_string: { type: 'string', description: 'Exact text to replace; must match exactly once.' },
  new_string: { type: 'string', description: 'Replacement text.' },
}

export function createFileTools(config: Config): ToolDefinition[] {
  const readTool: ToolDefinition<PathArgs> = {
    name: 'read_file',
    description: 'Read a UTF-8 text file from the workspace.',
    effects: 'read',
    parameters: exactly(pathArg),
    async execute(args, exec) {
      const file = await readContained(exec, args.path, config.readMaxBytes)
      if (!('text' in file)) return file
      return { content: file.text }
    },
  }

  const writeTool: ToolDefinition<WriteArgs> = {
    name: 'write_file',
    description: 'Create or overwrite a file in the workspace with the given content (parent directories are created).',
    effects: 'write',
    paths: args => [args.path],
    parameters: exactly({ ...pathArg, content: { type: 'string' } }),
    async execute(args, exec) {
      const abs = containWritable(exec, args.path)
      if (typeof abs !== 'string') return abs
      const root = workspaceRoot(exec)
      // Refused before anything is written (an atomic write puts its temp file beside the target: for the root, outside the workspace).
      if (abs === root) return { content: `refused: path ${JSON.stringify(args.path)} names the workspace directory itself, not a file; nothing was written`, isError: true }
      const existing = await stat(abs).catch(() => undefined)
      if (existing?.isDirectory()) return { content: `refused: ${args.path} is a directory, not a file; nothing was written`, isError: true }
      await writeText(abs, args.content)
      return { content: `${existing ? 'wrote' : 'created'} ${toPosixRelative(root, abs)} (${Buffer.byteLength(args.content)} bytes)` }
    },
  }

  const editTool: ToolDefinition<EditArgs> = {
    name: 'edit_file',
    description: 'Replace one exact occurrence of old_string with new_string in a file.',
    effects: 'write',
    paths: args => [args.path],
    parameters: exactly(editArgs),
    async execute(args, exec) {
      const file = await readContained(exec, args.path, undefined, true)
      if (!('text' in file)) return file
      try {
        await writeText(file.abs, applyEdits(file.text, [args], args.path))
      } catch (error) {
        if (error instanceof EditError) return { content: error.message, isError: true }
        throw error
      }
      return { content: `edited ${toPosixRelative(workspaceRoot(exec), file.abs)}` }
    },
  }

  const multiEditTool: ToolDefinition<MultiEditArgs> = {
    name: 'multi_edit',
    description: 'Apply several exact-string edits, possibly across files, all-or-nothing: if any edit fails, no file is changed.',
    effects: 'write',
    paths: args => [...new Set(args.edits.map(e => e.path))],
    parameters: exactly({ edits: { type: 'array', minItems: 1, items: exactly(editArgs) } }),
    async execute(args, exec) {
      const root = workspaceRoot(exec)
      // Plan every file's new text first; write only when all edits applied.
      const plan = new Map<string, { rel: string; edits: Edit[] }>()
      for (const edit of args.edits) {
        const abs = containWritable(exec, edit.path)
        if (typeof abs !== 'string') return abs
        const entry = plan.get(abs) ?? { rel: edit.path, edits: [] }
        entry.edits.push(edit)
        plan.set(abs, entry)
      }
      const next = new Map<string, string>()
      const originals = new Map<string, string>()
      for (const [abs, { rel, edits }] of plan) {
        const text = await readText(abs, rel, { signal: exec.signal })
        if (typeof text !== 'string') return { ...text, content: `${text.content.replace(/; nothing was read$/, '')}; no file was changed` }
        originals.set(abs, text)
        try {
          next.set(abs, applyEdits(text, edits, rel))
        } catch (error) {
          if (error instanceof EditError) return { content: `${error.message}; no file was changed`, isError: true }
          throw error
        }
      }
      // Write each file; if one write fails, put back the ones already written.
      const written: string[] = []
      try {
        for (const [abs, text] of next) {
          await writeText(abs, text)
          written.push(abs)
        }
      } catch (error) {
        for (const abs of written) await writeText(abs, originals.get(abs)!)
        return { content: `multi_edit failed writing ${toPosixRelative(root, [...next.keys()][written.length]!)}: ${(error as Error).message}; no file was changed`, isError: true }
      }
      return { content: `edited ${[...next.keys()].map(a => toPosixRelative(root, a)).join(', ')} (${args.edits.length} edits)` }
    },
  }

  return [readTool, writeTool, editTool, multiEditTool] as ToolDefinition[]
}
