/**
 * Claude Code's side of the hooks protocol, played by a script: each hook
 * call runs the real client (`bin/dsh-hook`, the command line install
 * writes) with the payload Claude Code would send, and the script does
 * what the agent's tool would do between PreToolUse and PostToolUse. The
 * host is the real `dsh hooks serve` the client starts.
 */
import { spawn } from 'node:child_process'
import { cpSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ADAPTERS, hookCommand, hostStatus, installHooks, writeHostSettings } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const claude = ADAPTERS.find(a => a.agent === 'claude-code')!

export const ADD = 'export function add(a: Cents, b: Cents): Cents {'
export const ADD_BROKEN = 'export function add(a: Cents, b: string): Cents {'
export const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
export const GOOD = `${ROUNDING} // rounded to the cent`

/** The demo shop as a fresh workspace with the Claude Code hooks installed. */
export function shopWorkspace(prefix = 'dsh-hooks-e2e-'): string {
  const ws = join(tempDir(prefix), 'shop')
  cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
  symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
  installHooks(claude, ws)
  // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
  writeHostSettings(join(ws, '.dsh'), { background: false })
  return ws
}

/**
 * Our hooks in the team's `.claude/settings.json` rather than the local file
 * an install writes: a project whose settings carry them (an earlier install,
 * or hooks a team committed) — the file an agent's edit would most likely target.
 */
export function hooksInTeamSettings(ws: string): void {
  renameSync(join(ws, '.claude/settings.local.json'), join(ws, '.claude/settings.json'))
}

export interface HookRun {
  /** The client's stdout, parsed (undefined: it printed nothing). */
  answer: Record<string, unknown> | undefined
  stdout: string
  ms: number
}

/** Run one hook of Claude Code's through the real client, as the agent does. */
export function runHook(ws: string, event: string, payload: Record<string, unknown>): Promise<HookRun> {
  const entry = claude.hooks.find(h => h.event === event)!
  const command = hookCommand(ws, 'claude-code', entry)
  const started = Date.now()
  return new Promise((resolvePromise, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: ws, stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8') })
    child.on('error', reject)
    child.on('close', () => {
      const ms = Date.now() - started
      resolvePromise({ answer: out.trim() ? JSON.parse(out) as Record<string, unknown> : undefined, stdout: out, ms })
    })
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd: ws, transcript_path: join(ws, '..', 'transcript.jsonl'), ...payload }))
  })
}

/** The text the model is shown by an answer: a block's reason or the additional context. */
export function shown(run: HookRun): string {
  const a = run.answer
  if (!a) return ''
  if (typeof a.reason === 'string') return a.reason
  const spec = a.hookSpecificOutput as { additionalContext?: string; permissionDecisionReason?: string } | undefined
  return spec?.additionalContext ?? spec?.permissionDecisionReason ?? ''
}

let calls = 0

/** One Claude Code session of the script. */
export class ClaudeSession {
  constructor(readonly ws: string, readonly id = `s-${process.pid}-${Math.random().toString(36).slice(2, 8)}`) {}

  start(): Promise<HookRun> {
    return runHook(this.ws, 'SessionStart', { session_id: this.id, source: 'startup' })
  }

  prompt(text: string): Promise<HookRun> {
    return runHook(this.ws, 'UserPromptSubmit', { session_id: this.id, prompt: text })
  }

  stop(): Promise<HookRun> {
    return runHook(this.ws, 'Stop', { session_id: this.id, stop_hook_active: false })
  }

  /** PreToolUse of an Edit the agent then refuses (no PostToolUse), as a permission refusal does. */
  async refusedEdit(file: string, from: string, to: string): Promise<HookRun> {
    return runHook(this.ws, 'PreToolUse', { session_id: this.id, tool_name: 'Edit', tool_use_id: `toolu_${++calls}`, tool_input: { file_path: join(this.ws, file), old_string: from, new_string: to } })
  }

  /** PreToolUse, the Edit itself, PostToolUse: the post hook's run (the pre hook's in `pre`). */
  async edit(file: string, from: string, to: string, options: { post?: boolean } = {}): Promise<HookRun & { pre: HookRun; sendPost: () => Promise<HookRun> }> {
    const id = `toolu_${++calls}`
    const path = join(this.ws, file)
    const tool_input = { file_path: path, old_string: from, new_string: to }
    const pre = await runHook(this.ws, 'PreToolUse', { session_id: this.id, tool_name: 'Edit', tool_use_id: id, tool_input })
    const denied = (pre.answer?.hookSpecificOutput as { permissionDecision?: string } | undefined)?.permissionDecision === 'deny'
    const sendPost = () => runHook(this.ws, 'PostToolUse', { session_id: this.id, tool_name: 'Edit', tool_use_id: id, tool_input, tool_response: { filePath: path, oldString: from, newString: to } })
    if (denied) return { ...pre, pre, sendPost }
    const text = readFileSync(path, 'utf8')
    if (!text.includes(from)) throw new Error(`${file} does not contain ${from}`)
    writeFileSync(path, text.replace(from, to))
    if (options.post === false) return { answer: undefined, stdout: '', ms: 0, pre, sendPost }
    return { ...await sendPost(), pre, sendPost }
  }
}

/** Stop the workspace's host (SIGKILL: a test leaves nothing running). */
export async function killHost(ws: string): Promise<void> {
  const status = await hostStatus(join(ws, '.dsh'), 500)
  if (status.pid) {
    try {
      process.kill(status.pid, 'SIGKILL')
    } catch {
      // ESRCH: gone already.
    }
  }
}
