/**
 * Verdicts across a turn (ADR 0037) in the real agent CLIs (Claude Code,
 * Codex, Gemini CLI; pinned, offline in a loopback-only namespace, on scripted
 * models), on a real project: unjs/defu at a pinned commit, cloned from the
 * fetched mirror (`DSH_MIRRORS`, default /work/.mirror) and installed with its
 * own lockfile, guarded through `dsh hooks install`. The model edits one file
 * per call, with each agent's own tool (Claude Code reads the files first, in
 * parallel; Codex patches; Gemini CLI writes whole files).
 *
 * - the rename of `isPlainObject` in its definition, its importer and its
 *   test: every write kept, nothing rolled back or undone;
 * - the same rename stopped after the definition: the Stop blocked once with
 *   the importer's breakage; the model answers without writing, so its next
 *   Stop undoes the definition's write byte for byte;
 * - a real bug (arrays no longer concatenated; the tests catch it): kept for
 *   now, the Stop blocked; the model writes something that does not fix it,
 *   so the Stop is blocked again (the last of `stopRefusals`: 2), then the
 *   bug and that write are gone by the end of the turn.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli, type AgentCliName } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, hostStatus, installHooks, writeHostSettings } from 'dsh-host-hooks'
import { anthropicModel, geminiModel, isClaudeTurnRequest, isGeminiTurnRequest, loopbackUnavailable, responsesModel, runClaude, runCodex, runGemini, startModelServer, tempDir, type AgentRun, type AgentStep, type AgentToolCall, type ModelReply, type ModelRequest, type ModelServer } from 'dsh-testkit'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'

const DEFU = 'unjs/defu'
const COMMIT = '80c0146'
const MIRROR = join(process.env.DSH_MIRRORS ?? '/work/.mirror', DEFU.replace('/', '+'), 'repo')

const noMirror = existsSync(MIRROR) ? undefined : `no fetched mirror of ${DEFU} at ${MIRROR} (set DSH_MIRRORS)`
if (noMirror) console.warn(`turn verdicts e2e skipped: ${noMirror}`)
const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable (the pinned CLIs and defu\'s dependencies come from it)'
const skip = noMirror ?? offline ?? (await loopbackUnavailable())
if (skip && !noMirror) console.warn(`turn verdicts e2e skipped: ${skip}`)

const UTILS = 'src/_utils.ts'
const DEFU_TS = 'src/defu.ts'
const TEST = 'test/utils.test.ts'

const IMPORTER_BROKEN = "src/defu.ts:1 TS2724 '\"./_utils\"' has no exported member named 'isPlainObject'. Did you mean 'isPlainObj'?"
const TEST_BROKEN = "test/utils.test.ts:3 TS2724 '\"../src/_utils\"' has no exported member named 'isPlainObject'. Did you mean 'isPlainObj'?"
const BUG_FAILS = [
  "test/defu.test.ts:34 FAIL defu > should concat array values by default — AssertionError: expected { array: [ 'c', 'd' ] } to deeply equal { array: [ 'a', 'b', 'c', 'd' ] }",
  "test/defu.test.ts:42 FAIL defu > should correctly type differing array values — AssertionError: expected { items: [ { name: 'Name', …(1) } ] } to deeply equal { items: [ …(2) ] }",
].join('\n')
const PARTIAL = '(typecheck stopped at the first new errors: possibly more in files not checked)'

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

/** The agent CLIs escape `>` in the hook text they show the model (Codex in a refused stop's prompt, Gemini CLI in hook context). */
const escaped = (text: string) => text.replaceAll('>', '&gt;')

/** How one agent CLI takes part. */
interface Agent {
  label: string
  cli: AgentCliName
  adapter: string
  /** Its tool's name in the suite's texts. */
  tool: string
  /** The model's reading of `paths` before it edits them, where the CLI requires it. */
  read?(paths: string[]): AgentStep
  /** The call that replaces every `from` by `to` in `path` (relative to the workspace `ws`), whose content is `content`. */
  change(ws: string, path: string, content: string, from: string, to: string): AgentToolCall
  model(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply
  turns(requests: readonly ModelRequest[]): ModelRequest[]
  run(options: { bin: string; workspace: string; prompt: string; server: ModelServer; home: string; timeoutMs: number }, resume?: AgentRun): Promise<AgentRun>
  prepareHome?(home: string, ws: string): void
  /** How the model sees the suite's text for a kept write, a refused stop, and (at the next session) the turn's undo. */
  shown: { kept(text: string): string; refused(text: string): string; undone(text: string): string }
}

const AGENTS: Agent[] = [
  {
    label: 'Claude Code', cli: 'claude', adapter: 'claude-code', tool: 'Edit',
    read: paths => ({ text: 'Reading them.', toolCalls: paths.map(p => ({ name: 'Read', arguments: { file_path: p } })) }),
    change: (ws, path, _content, from, to) => ({ name: 'Edit', arguments: { file_path: join(ws, path), old_string: from, new_string: to, replace_all: true } }),
    model: anthropicModel,
    turns: requests => requests.filter(isClaudeTurnRequest),
    // The workspace is trusted (else Claude Code ignores its permissions), as after its trust dialog; the install's MCP server stays.
    prepareHome: (home, ws) => {
      const file = join(home, '.claude.json')
      const config = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as { projects?: Record<string, object> }
      config.projects = { ...config.projects, [ws]: { ...config.projects?.[ws], hasTrustDialogAccepted: true } }
      writeFileSync(file, JSON.stringify(config, null, 2))
    },
    run: (options, resume) => {
      const sessionId = resume?.events.find(e => e.type === 'result')?.session_id as string | undefined
      return runClaude({ ...options, extraArgs: sessionId ? ['--resume', sessionId] : [] })
    },
    // A SessionStart hook's context comes as a system message.
    shown: { kept: t => `PostToolUse:Edit hook additional context: ${t}\n`, refused: t => `Stop hook feedback:\n${t}`, undone: t => `SessionStart hook additional context: ${t}` },
  },
  {
    label: 'Codex', cli: 'codex', adapter: 'codex', tool: 'apply_patch',
    // One hunk per line that changes (apply_patch replaces whole lines).
    change: (_ws, path, content, from, to) => {
      const hunks = content.split('\n').filter(line => line.includes(from)).map(line => `@@\n-${line}\n+${line.replaceAll(from, to)}\n`)
      return { name: 'apply_patch', arguments: `*** Begin Patch\n*** Update File: ${path}\n${hunks.join('')}*** End Patch\n` }
    },
    model: responsesModel,
    turns: requests => [...requests],
    run: (options, resume) => {
      const thread = resume?.events.find(e => e.type === 'thread.started')?.thread_id as string | undefined
      return runCodex({ ...options, ...(thread ? { extraArgs: ['resume', thread] } : {}) })
    },
    // The refused stop's reason is the next user message, in a <hook_prompt>; the rest are developer messages.
    shown: { kept: t => t, refused: t => `">${escaped(t)}</hook_prompt>`, undone: t => t },
  },
  {
    label: 'Gemini CLI', cli: 'gemini', adapter: 'gemini', tool: 'write_file',
    change: (_ws, path, content, from, to) => ({ name: 'write_file', arguments: { file_path: path, content: content.replaceAll(from, to) } }),
    model: geminiModel,
    turns: requests => requests.filter(isGeminiTurnRequest),
    run: (options, resume) => runGemini({ ...options, ...(resume ? { extraArgs: ['--resume', 'latest'] } : {}) }),
    // The denied AfterAgent's reason comes back as the prompt; hook context is wrapped and escaped.
    shown: { kept: t => `<hook_context>${escaped(t)}</hook_context>`, refused: t => t, undone: t => `<hook_context>${escaped(t)}</hook_context>` },
  },
]

/** One session (and a resumed one, so what the next session is told is seen) on a fresh copy of the installed clone. */
interface Session {
  ws: string
  first: AgentRun
  second: AgentRun
  /** Whether the request after scripted step `i` shows the model `text` (as it appears in the request: JSON-encoded). */
  sawAfter(i: number, text: string): boolean
  /** Everything the first session's requests carried. */
  all(): string
  /** Whether the resumed session's first request shows `text`. */
  sawAtNextSession(text: string): boolean
  original(path: string): string
  now(path: string): string
}

const encoded = (text: string) => JSON.stringify(text).slice(1, -1)
const body = (request: ModelRequest | undefined) => JSON.stringify(request?.body ?? '')

for (const agent of AGENTS) describe.skipIf(!!skip)(`turn verdicts with the real ${agent.label} CLI on unjs/defu`, () => {
  let bin = ''
  let base = ''
  const servers: ModelServer[] = []
  const workspaces: string[] = []

  beforeAll(async () => {
    bin = await ensureAgentCli(agent.cli)
    base = join(tempDir('dsh-defu-base-'), 'defu')
    git(tempDir('dsh-defu-clone-'), ['clone', '-q', '--no-checkout', MIRROR, base])
    git(base, ['-c', 'advice.detachedHead=false', 'checkout', '-q', COMMIT])
    const install = spawnSync('pnpm', ['--config.manage-package-manager-versions=false', 'install', '--frozen-lockfile', '--ignore-scripts'], { cwd: base, encoding: 'utf8', env: { ...process.env, CI: '1' }, timeout: 300_000 })
    if (install.status !== 0) throw new Error(`installing ${DEFU}: ${install.stdout}${install.stderr}`)
  }, 400_000)

  afterAll(async () => {
    for (const server of servers) await server.close()
    for (const ws of workspaces) {
      const status = await hostStatus(join(ws, '.dsh'))
      if (status?.pid) process.kill(status.pid, 'SIGTERM')
    }
  })

  /** `steps(ws)`: the model's answers after its reading of `reads`. */
  async function session(name: string, reads: string[], steps: (ws: string) => AgentStep[]): Promise<Session> {
    const ws = join(tempDir(`dsh-defu-${agent.cli}-${name}-`), 'defu')
    cpSync(base, ws, { recursive: true, filter: src => !src.startsWith(join(base, 'node_modules')) })
    symlinkSync(join(base, 'node_modules'), join(ws, 'node_modules'), 'dir')
    workspaces.push(ws)
    const home = tempDir(`dsh-defu-${agent.cli}-home-`)
    installHooks(ADAPTERS.find(a => a.agent === agent.adapter)!, ws, { home })
    // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
    writeHostSettings(join(ws, '.dsh'), { background: false })
    agent.prepareHome?.(home, ws)
    const read = agent.read ? [agent.read(reads.map(p => join(ws, p)))] : []
    const server = await startModelServer(agent.model([...read, ...steps(ws), { text: 'Nothing else.' }]))
    servers.push(server)
    const options = { bin, workspace: ws, server, home, timeoutMs: 400_000 }
    const first = await agent.run({ ...options, prompt: 'Rename isPlainObject to isPlainObj.' })
    const firstTurns = agent.turns(server.requests).length
    const second = await agent.run({ ...options, prompt: 'What is left?' }, first)
    return {
      ws, first, second,
      sawAfter: (i, text) => body(agent.turns(server.requests)[read.length + i + 1]).includes(encoded(text)),
      all: () => agent.turns(server.requests).slice(0, firstTurns).map(body).join('\n'),
      sawAtNextSession: text => body(agent.turns(server.requests)[firstTurns]).includes(encoded(text)),
      original: path => git(ws, ['show', `HEAD:${path}`]),
      now: path => readFileSync(join(ws, path), 'utf8'),
    }
  }

  const rename = (ws: string, path: string) => agent.change(ws, path, readFileSync(join(ws, path), 'utf8'), 'isPlainObject', 'isPlainObj')
  const done: AgentStep = { text: 'Done.' }
  const kept = (lines: string[]) => agent.shown.kept(lines.join('\n'))

  describe('the rename, one file per call', () => {
    let s: Session
    beforeAll(async () => {
      s = await session('rename', [UTILS, DEFU_TS, TEST], ws => [
        { text: 'Rename it in its definition.', toolCalls: [rename(ws, UTILS)] },
        { text: 'Then its user.', toolCalls: [rename(ws, DEFU_TS)] },
        { text: 'Then its test.', toolCalls: [rename(ws, TEST)] },
        { text: 'Renamed.' },
      ])
    }, 560_000)

    it('keeps every write: the definition for now with its importer\'s breakage, then what is still open, then fixed', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      expect(s.sawAfter(0, kept(['kept for now: 1 file no longer type-checks against this change:', IMPORTER_BROKEN, PARTIAL, 'fix them before you finish, or this change is undone']))).toBe(true)
      expect(s.sawAfter(1, kept(['still to fix before you finish (left by this turn\'s earlier writes): 1 problem:', TEST_BROKEN]))).toBe(true)
      expect(s.sawAfter(2, kept(['the problems this turn\'s earlier writes left in other files are fixed (the whole change is checked again when you finish)']))).toBe(true)
    })

    it('lets the stop through and keeps the whole rename; nothing was rolled back or undone', () => {
      for (const path of [UTILS, DEFU_TS, TEST]) expect(s.now(path)).toBe(s.original(path).replaceAll('isPlainObject', 'isPlainObj'))
      for (const word of ['rolled back', 'not done:', 'undone at the end of the turn']) expect(s.all()).not.toContain(word)
    })
  })

  describe('the rename stopped after its first step', () => {
    let s: Session
    beforeAll(async () => {
      s = await session('stopped', [UTILS], ws => [{ text: 'Rename it in its definition.', toolCalls: [rename(ws, UTILS)] }, done, done])
    }, 560_000)

    it('keeps the definition for now, then refuses the stop once with the importer it broke', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      expect(s.sawAfter(0, kept(['kept for now: 1 file no longer type-checks against this change:', IMPORTER_BROKEN, PARTIAL, 'fix them before you finish, or this change is undone']))).toBe(true)
      const refusal = `not done: this turn leaves the project worse than it began (stop refused, 1 of 2): 1 file no longer type-checks:\n${IMPORTER_BROKEN}\nfix them, then finish; stopping again without writing a fix undoes ${agent.tool} on src/_utils.ts`
      expect(s.sawAfter(1, agent.shown.refused(refusal))).toBe(true)
      expect(s.all()).not.toContain('stop refused, 2 of 2')
    })

    it('undoes the definition\'s write byte for byte at the next stop (nothing written since the refusal), and says so at the next session', () => {
      expect(s.now(UTILS)).toBe(s.original(UTILS))
      expect(git(s.ws, ['status', '--porcelain', '--', 'src', 'test'])).toBe('')
      expect(s.sawAtNextSession(agent.shown.undone(`undone at the end of the turn: ${agent.tool} on src/_utils.ts; it left the project worse than the turn began: 1 file no longer type-checks:\n${IMPORTER_BROKEN}\nto make this change, update every file it breaks in the same turn before you finish`))).toBe(true)
    })
  })

  describe('a real bug its tests catch, with no fix', () => {
    let s: Session
    const BUG: [string, string] = ['[...value, ...object[key]]', '[...object[key]]']
    /** A write after the refusal that does not fix the bug: a comment. */
    const NOTE: [string, string] = ['// Base function to apply defaults', "// Base function to apply defaults (the defaults' array wins)"]
    const bug = (ws: string) => agent.change(ws, DEFU_TS, readFileSync(join(ws, DEFU_TS), 'utf8'), ...BUG)
    const note = (ws: string) => agent.change(ws, DEFU_TS, readFileSync(join(ws, DEFU_TS), 'utf8').replaceAll(...BUG), ...NOTE)
    beforeAll(async () => {
      s = await session('bug', [DEFU_TS], ws => [{ text: 'Let the defaults\' array win.', toolCalls: [bug(ws)] }, done, { text: 'Saying so.', toolCalls: [note(ws)] }, done, done])
    }, 560_000)
    const refusal = (n: number, next: string, writes: string) => `not done: this turn leaves the project worse than it began (stop refused, ${n} of 2): 2 tests in 1 file fail:\n${BUG_FAILS}\nfix them, then finish; ${next} ${writes}`

    it('keeps it for now with the failing tests, refuses the stop; a write that does not fix it, and the stop is refused again', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      expect(s.sawAfter(0, kept(['kept for now: 2 tests in 1 file fail against this change:', BUG_FAILS, 'fix them before you finish, or this change is undone']))).toBe(true)
      expect(s.sawAfter(1, agent.shown.refused(refusal(1, 'stopping again without writing a fix undoes', `${agent.tool} on src/defu.ts`)))).toBe(true)
      expect(s.sawAfter(3, agent.shown.refused(refusal(2, 'stopping with them open undoes', `${agent.tool} on src/defu.ts; ${agent.tool} on src/defu.ts`)))).toBe(true)
    })

    it('is gone by the end of the turn with the write after it, byte for byte', () => {
      expect(s.now(DEFU_TS)).toBe(s.original(DEFU_TS))
      expect(git(s.ws, ['status', '--porcelain', '--', 'src', 'test'])).toBe('')
      expect(s.sawAtNextSession(agent.shown.undone(`undone at the end of the turn: ${agent.tool} on src/defu.ts; ${agent.tool} on src/defu.ts; it left the project worse than the turn began: 2 tests in 1 file fail:\n${BUG_FAILS}\nto make this change, update every file it breaks in the same turn before you finish`))).toBe(true)
    })
  })
})
