/**
 * Running the real Codex CLI and Gemini CLI on a scripted model, offline:
 * each in a loopback-only network namespace (`runInLoopback`), with a home
 * directory of its own (no user config, credentials or history leak in),
 * pointed at a `startModelServer` through a forwarded port. The hook
 * configuration is the workspace's (`.codex/hooks.json`,
 * `.gemini/settings.json`): what the test, or `dsh hooks install`, wrote.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RunResult } from 'dsh-common'
import { runInLoopback } from './loopback.ts'
import type { ModelServer } from './models/server.ts'
import { tempDir } from './temp.ts'

/** The port the model server is forwarded to inside the namespace (each namespace has its own loopback). */
export const MODEL_PORT = 8787

export interface AgentRunOptions {
  /** The CLI's executable (from scripts/agent-clis.ts). */
  bin: string
  workspace: string
  prompt: string
  server: ModelServer
  /** The CLI's home (config, sessions); a fresh temp dir by default. */
  home?: string
  /** Extra environment for the CLI and so for its hooks. */
  env?: Record<string, string>
  /** Arguments before the prompt (Codex: `['resume', id]`; Gemini: `['--resume', id]`). */
  extraArgs?: string[]
  timeoutMs?: number
}

export interface AgentRun extends RunResult {
  /** stdout's JSON Lines, parsed (lines that are not JSON are left out). */
  events: Record<string, unknown>[]
}

function parsed(result: RunResult): AgentRun {
  const events = result.stdout.split('\n').flatMap(line => {
    try {
      const value: unknown = JSON.parse(line)
      return value && typeof value === 'object' ? [value as Record<string, unknown>] : []
    } catch {
      return []
    }
  })
  return { ...result, events }
}

/**
 * The model Codex is told it talks to: one whose metadata Codex ships, so it
 * offers `apply_patch` (freeform) and `exec_command` as it would to a user.
 */
export const CODEX_MODEL = 'gpt-5.5'

/**
 * `codex exec --json` with a `model_providers` entry (`wire_api = "responses"`)
 * for the server, the workspace trusted (project config, hooks included, is
 * ignored otherwise) and hooks run without review (`--dangerously-bypass-hook-trust`),
 * no sandbox (the namespace is the fence). `config` is appended to those lines;
 * what Codex's own commands wrote into config.toml (`codex plugin add`) stays.
 */
export async function runCodex(options: AgentRunOptions & { config?: string }): Promise<AgentRun> {
  const home = options.home ?? tempDir('dsh-codex-home-')
  writeCodexConfig(home, options.workspace, options.config)
  const argv = [options.bin, 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--dangerously-bypass-approvals-and-sandbox', ...(options.extraArgs ?? []), options.prompt]
  return parsed(await runInLoopback(argv, {
    cwd: options.workspace,
    env: { HOME: home, CODEX_HOME: home, SCRIPTED_MODEL_KEY: 'scripted', ...options.env },
    forward: { [MODEL_PORT]: options.server.socketPath },
    timeoutMs: options.timeoutMs ?? 120_000,
  }))
}

/**
 * `runCodex`'s lines of `<home>/config.toml` (the scripted provider, the
 * workspace trusted, `config`), first in the file; what Codex's own commands
 * wrote there (`codex plugin add`: tables it appends) stays after them. A file
 * that already starts with them is left as it is, so a test may write them
 * before it snapshots the home (one workspace and `config` per home).
 */
export function writeCodexConfig(home: string, workspace: string, config?: string): void {
  const file = join(home, 'config.toml')
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  const lines = [
    `model = "${CODEX_MODEL}"`,
    'model_provider = "scripted"',
    '[model_providers.scripted]',
    'name = "scripted"',
    `base_url = "http://127.0.0.1:${MODEL_PORT}/v1"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_MODEL_KEY"',
    `[projects.${JSON.stringify(workspace)}]`,
    'trust_level = "trusted"',
    config ?? '',
  ].join('\n') + '\n'
  if (!text.startsWith(lines)) writeFileSync(file, lines + text)
}

/**
 * `claude -p … --output-format stream-json --verbose` against the server
 * (`ANTHROPIC_BASE_URL`, a dummy key), edits accepted without asking
 * (`--permission-mode acceptEdits`; `extraArgs` may add more), telemetry,
 * updates and error reports off. The hooks and MCP servers are the
 * workspace's (`.claude/settings.json`, `.mcp.json`).
 */
export async function runClaude(options: AgentRunOptions & { extraArgs?: string[] }): Promise<AgentRun> {
  const home = options.home ?? tempDir('dsh-claude-home-')
  const argv = [options.bin, '-p', options.prompt, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits', ...(options.extraArgs ?? [])]
  return parsed(await runInLoopback(argv, {
    cwd: options.workspace,
    env: {
      HOME: home, ANTHROPIC_BASE_URL: `http://127.0.0.1:${MODEL_PORT}`, ANTHROPIC_API_KEY: 'sk-ant-scripted',
      DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1',
      ...options.env,
    },
    forward: { [MODEL_PORT]: options.server.socketPath },
    timeoutMs: options.timeoutMs ?? 180_000,
  }))
}

/**
 * `gemini -p … --output-format stream-json --yolo` against the server
 * (`GOOGLE_GEMINI_BASE_URL`, API-key auth). The workspace is trusted through
 * `GEMINI_CLI_TRUST_WORKSPACE=true`: `--skip-trust` alone sets it too late
 * for the workspace's settings, so its hooks would not load. A fixed model
 * (`-m`) skips the CLI's routing request.
 */
export async function runGemini(options: AgentRunOptions): Promise<AgentRun> {
  const home = options.home ?? tempDir('dsh-gemini-home-')
  writeGeminiSettings(home)
  const argv = [options.bin, '-p', options.prompt, '--output-format', 'stream-json', '--yolo', '--skip-trust', '-m', 'gemini-2.5-pro', ...(options.extraArgs ?? [])]
  return parsed(await runInLoopback(argv, {
    cwd: options.workspace,
    env: { HOME: home, GEMINI_API_KEY: 'scripted', GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${MODEL_PORT}`, GEMINI_CLI_TRUST_WORKSPACE: 'true', ...options.env },
    forward: { [MODEL_PORT]: options.server.socketPath },
    timeoutMs: options.timeoutMs ?? 120_000,
  }))
}

/**
 * `runGemini`'s part of `<home>/.gemini/settings.json` (API-key auth), merged
 * with what is there; the file is left as it is when it already has it, so a
 * test may write it before it snapshots the home.
 */
export function writeGeminiSettings(home: string): void {
  const file = join(home, '.gemini', 'settings.json')
  const settings = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as { security?: { auth?: Record<string, unknown> } }
  if (settings.security?.auth?.selectedType === 'gemini-api-key') return
  settings.security = { ...settings.security, auth: { ...settings.security?.auth, selectedType: 'gemini-api-key' } }
  mkdirSync(join(home, '.gemini'), { recursive: true })
  writeFileSync(file, JSON.stringify(settings))
}
