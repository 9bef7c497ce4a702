/**
 * Turn verdicts through the hooks host (ADR 0037), in process: the host's
 * answers to Claude Code's and Gemini CLI's hook payloads, with the real
 * dsh-snapshot and dsh-dstvalid (a real `tsc`) on a small workspace. The
 * agent's own edits are made by the test between the pre and post hooks,
 * as the agent would make them.
 */
import { readFileSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import DstValidService from 'dsh-dstvalid'
import * as Snapshot from 'dsh-snapshot'
import { adapterFor, HookHost } from 'dsh-host-hooks'
import { harness, tempDir } from 'dsh-testkit'
import { repoRoot } from './helpers.ts'

const FILES: Record<string, string> = {
  'package.json': '{ "name": "w", "private": true, "type": "module" }\n',
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src'] }),
  'src/utils.ts': 'export function isPlainObject(v: unknown): boolean {\n  return typeof v === \'object\' && v !== null\n}\n',
  'src/merge.ts': "import { isPlainObject } from './utils.ts'\n\nexport function merge(a: unknown): boolean {\n  return isPlainObject(a)\n}\n",
  'src/notes.ts': 'export const note = 1\n',
}

async function boot() {
  const root = tempDir('dsh-hooks-stop-')
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'))
  const kit = await harness({ workspace: root, workspaceTools: false, plugins: [[Snapshot, {}], [DstValidService, { warmOnStart: false, tests: 'off' }]] })
  onTestFinished(() => kit.dispose())
  const host = new HookHost({ ctx: kit.ctx, sessions: kit.ctx.sessions, tools: kit.ctx.tools, workspace: root, vault: join(root, '.dsh') })
  return { root, host, read: (rel: string) => readFileSync(join(root, rel), 'utf8') }
}

const RENAMED = FILES['src/utils.ts']!.replace('isPlainObject', 'isPlainObj')
const BROKEN = "src/merge.ts:1 TS2724 '\"./utils.ts\"' has no exported member named 'isPlainObject'. Did you mean 'isPlainObj'?"
const refusal = (n: number) => [
  `not done: this turn leaves the project worse than it began (stop refused, ${n} of 2): 1 file no longer type-checks:`,
  BROKEN,
  `fix them, then finish; ${n < 2 ? 'stopping again without writing a fix undoes' : 'stopping with them open undoes'} Write on src/utils.ts`,
].join('\n')

describe('turn verdicts through the hooks host', { timeout: 180_000 }, () => {
  it('Claude Code: a rename stopped after its first write: Stop blocked with the breakage; a write that does not fix it, Stop blocked again; then the write undone byte for byte; unrelated work kept', async () => {
    const { root, host, read } = await boot()
    const cc = adapterFor('claude-code')!
    const s = { session_id: 'cc1', cwd: root }
    const write = async (id: string, rel: string, content: string) => {
      const tool_input = { file_path: join(root, rel), content }
      expect(await host.handle(cc, 'PreToolUse', { ...s, tool_name: 'Write', tool_input, tool_use_id: id })).toBeUndefined()
      writeFileSync(join(root, rel), content)
      return host.handle(cc, 'PostToolUse', { ...s, tool_name: 'Write', tool_input, tool_use_id: id, tool_response: { type: 'update' } })
    }
    await host.handle(cc, 'UserPromptSubmit', { ...s, prompt: 'Rename isPlainObject.' })
    expect(await write('t1', 'src/utils.ts', RENAMED)).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: [
      'kept for now: 1 file no longer type-checks against this change:', BROKEN,
      '(typecheck stopped at the first new errors: possibly more in files not checked)',
      'fix them before you finish, or this change is undone',
    ].join('\n') } })
    expect(await write('t2', 'src/notes.ts', 'export const note = 2\n')).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: [
      "still to fix before you finish (left by this turn's earlier writes): 1 problem:", BROKEN,
    ].join('\n') } })
    expect(await host.handle(cc, 'Stop', { ...s, stop_hook_active: false })).toEqual({ decision: 'block', reason: refusal(1) })
    await write('t3', 'src/notes.ts', 'export const note = 3\n')
    expect(await host.handle(cc, 'Stop', { ...s, stop_hook_active: true })).toEqual({ decision: 'block', reason: refusal(2) })
    expect(await host.handle(cc, 'Stop', { ...s, stop_hook_active: true })).toBeUndefined()
    expect(read('src/utils.ts')).toBe(FILES['src/utils.ts'])
    expect(read('src/notes.ts')).toBe('export const note = 3\n')
    // What was undone reaches the model at its next prompt.
    const next = await host.handle(cc, 'UserPromptSubmit', { ...s, prompt: 'And now?' }) as { hookSpecificOutput: { additionalContext: string } }
    expect(next.hookSpecificOutput.additionalContext).toContain([
      'undone at the end of the turn: Write on src/utils.ts; it left the project worse than the turn began: 1 file no longer type-checks:',
      BROKEN,
      'kept: Write on src/notes.ts; Write on src/notes.ts',
      'to make this change, update every file it breaks in the same turn before you finish',
    ].join('\n'))
  })

  it('Claude Code: Stop blocked with the breakage; the model only reads, so the next Stop (stop_hook_active) undoes the write at once', async () => {
    const { root, host, read } = await boot()
    const cc = adapterFor('claude-code')!
    const s = { session_id: 'cc2', cwd: root }
    const tool_input = { file_path: join(root, 'src/utils.ts'), content: RENAMED }
    await host.handle(cc, 'UserPromptSubmit', { ...s, prompt: 'Rename isPlainObject.' })
    expect(await host.handle(cc, 'PreToolUse', { ...s, tool_name: 'Write', tool_input, tool_use_id: 't1' })).toBeUndefined()
    writeFileSync(join(root, 'src/utils.ts'), RENAMED)
    await host.handle(cc, 'PostToolUse', { ...s, tool_name: 'Write', tool_input, tool_use_id: 't1', tool_response: { type: 'update' } })
    expect(await host.handle(cc, 'Stop', { ...s, stop_hook_active: false })).toEqual({ decision: 'block', reason: refusal(1) })
    const look = { file_path: join(root, 'src/merge.ts') }
    expect(await host.handle(cc, 'PreToolUse', { ...s, tool_name: 'Read', tool_input: look, tool_use_id: 't2' })).toBeUndefined()
    await host.handle(cc, 'PostToolUse', { ...s, tool_name: 'Read', tool_input: look, tool_use_id: 't2', tool_response: { type: 'text' } })
    expect(await host.handle(cc, 'Stop', { ...s, stop_hook_active: true })).toBeUndefined()
    expect(read('src/utils.ts')).toBe(FILES['src/utils.ts'])
  })

  it('Gemini CLI: AfterAgent denied with the breakage; its reason comes back as the prompt of the same turn; the importer fixed, the next stop passes and both writes stay', async () => {
    const { root, host, read } = await boot()
    const gm = adapterFor('gemini')!
    const s = { session_id: 'g1', cwd: root }
    const write = async (rel: string, content: string) => {
      const tool_input = { file_path: rel, content }
      expect(await host.handle(gm, 'BeforeTool', { ...s, tool_name: 'write_file', tool_input })).toBeUndefined()
      writeFileSync(join(root, rel), content)
      return host.handle(gm, 'AfterTool', { ...s, tool_name: 'write_file', tool_input, tool_response: { llmContent: `Successfully wrote ${rel}` } })
    }
    await host.handle(gm, 'BeforeAgent', { ...s, prompt: 'Rename isPlainObject.' })
    await write('src/utils.ts', RENAMED)
    const denied = await host.handle(gm, 'AfterAgent', { ...s, stop_hook_active: false }) as { decision: string; reason: string }
    expect(denied).toEqual({ decision: 'deny', reason: refusal(1).replace('Write on', 'write_file on') })
    // Gemini CLI sends the reason as the next prompt and fires BeforeAgent again: the same turn goes on.
    expect(await host.handle(gm, 'BeforeAgent', { ...s, prompt: denied.reason })).toBeUndefined()
    const fixed = FILES['src/merge.ts']!.replaceAll('isPlainObject', 'isPlainObj')
    expect(await write('src/merge.ts', fixed)).toEqual({ hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: "the problems this turn's earlier writes left in other files are fixed (the whole change is checked again when you finish)" } })
    expect(await host.handle(gm, 'AfterAgent', { ...s, stop_hook_active: true })).toBeUndefined()
    expect(read('src/utils.ts')).toBe(RENAMED)
    expect(read('src/merge.ts')).toBe(fixed)
  })
})
