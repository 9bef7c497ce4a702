/**
 * Verdicts across a turn (ADR 0037) in the real Claude Code CLI (pinned,
 * offline in a loopback-only namespace, on a scripted Anthropic model), on a
 * real project: unjs/defu at a pinned commit, cloned from the fetched mirror
 * (`DSH_MIRRORS`, default /work/.mirror) and installed with its own lockfile,
 * guarded through `dsh hooks install`. The model works as Claude Code does:
 * it reads the files (in parallel), then edits one file per call.
 *
 * - the rename of `isPlainObject` in its definition, its importer and its
 *   test: every write kept, nothing rolled back or undone;
 * - the same rename stopped after the definition: the Stop blocked twice with
 *   the importer's breakage, then the definition's write undone byte for byte;
 * - a real bug (arrays no longer concatenated; the tests catch it, no fix):
 *   kept for now, the Stop blocked twice, gone by the end of the turn.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { ADAPTERS, hostStatus, installHooks } from 'dsh-host-hooks'
import { anthropicModel, anthropicUserTexts, isClaudeTurnRequest, runClaude, startModelServer, tempDir, type AgentRun, type AgentStep, type ModelRequest, type ModelServer } from 'dsh-testkit'
import { e2eSkip } from '../tests/agent-e2e.ts'

const DEFU = 'unjs/defu'
const COMMIT = '80c0146'
const MIRROR = join(process.env.DSH_MIRRORS ?? '/work/.mirror', DEFU.replace('/', '+'), 'repo')

const noMirror = existsSync(MIRROR) ? undefined : `no fetched mirror of ${DEFU} at ${MIRROR} (set DSH_MIRRORS)`
if (noMirror) console.warn(`turn verdicts e2e skipped: ${noMirror}`)
const skip = noMirror ?? (await e2eSkip('Claude Code'))

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

/** One Claude Code session (and a resumed one, so the text the next prompt carries is seen) on a fresh copy of the installed clone. */
interface Session {
  ws: string
  server: ModelServer
  first: AgentRun
  second: AgentRun
  turns(): ModelRequest[]
  texts(request: ModelRequest): string
  /** What the resumed session's first request shows as SessionStart hook context (Claude Code sends it as a system message). */
  atNextSession(): string[]
  original(path: string): string
  now(path: string): string
}

describe.skipIf(!!skip)('turn verdicts with the real Claude Code CLI on unjs/defu', () => {
  let bin = ''
  let base = ''
  const servers: ModelServer[] = []
  const workspaces: string[] = []

  beforeAll(async () => {
    bin = await ensureAgentCli('claude')
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

  /** `steps(ws)`: the model's answers (its calls name absolute paths, as Claude Code's tools take them). */
  async function session(name: string, steps: (ws: string) => AgentStep[]): Promise<Session> {
    const ws = join(tempDir(`dsh-defu-${name}-`), 'defu')
    cpSync(base, ws, { recursive: true, filter: src => !src.startsWith(join(base, 'node_modules')) })
    symlinkSync(join(base, 'node_modules'), join(ws, 'node_modules'), 'dir')
    workspaces.push(ws)
    installHooks(ADAPTERS.find(a => a.agent === 'claude-code')!, ws)
    const home = tempDir('dsh-defu-home-')
    // The workspace is trusted (else Claude Code ignores its permissions), as after its trust dialog.
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))
    const server = await startModelServer(anthropicModel([...steps(ws), { text: 'Nothing else.' }]))
    servers.push(server)
    const options = { bin, workspace: ws, server, home, timeoutMs: 400_000 }
    const first = await runClaude({ ...options, prompt: 'Rename isPlainObject to isPlainObj.' })
    const sessionId = first.events.find(e => e.type === 'result')?.session_id as string | undefined
    const second = await runClaude({ ...options, prompt: 'What is left?', extraArgs: sessionId ? ['--resume', sessionId] : [] })
    return {
      ws, server, first, second,
      turns: () => server.requests.filter(isClaudeTurnRequest),
      texts: request => anthropicUserTexts(request).join('\n'),
      atNextSession: () => (server.requests.filter(isClaudeTurnRequest).at(-1)!.body as { messages: { role: string; content: unknown }[] }).messages
        .filter(m => m.role === 'system').map(m => String(m.content)).filter(text => text.startsWith('SessionStart hook additional context: ')),
      original: path => git(ws, ['show', `HEAD:${path}`]),
      now: path => readFileSync(join(ws, path), 'utf8'),
    }
  }

  const read = (...paths: string[]): AgentStep => ({ text: 'Reading them.', toolCalls: paths.map(p => ({ name: 'Read', arguments: { file_path: p } })) })
  const rename = (ws: string, path: string, all: boolean) => ({ name: 'Edit', arguments: { file_path: join(ws, path), old_string: all ? 'isPlainObject' : 'export function isPlainObject(', new_string: all ? 'isPlainObj' : 'export function isPlainObj(', ...(all ? { replace_all: true } : {}) } })

  describe('the rename, one file per call', () => {
    let s: Session
    beforeAll(async () => {
      s = await session('rename', ws => [
        read(join(ws, UTILS), join(ws, DEFU_TS), join(ws, TEST)),
        { text: 'Rename it in its definition.', toolCalls: [rename(ws, UTILS, false)] },
        { text: 'Then its user.', toolCalls: [rename(ws, DEFU_TS, true)] },
        { text: 'Then its test.', toolCalls: [rename(ws, TEST, true)] },
        { text: 'Renamed.' },
      ])
    }, 560_000)

    it('keeps every write: the definition for now with its importer\'s breakage, then what is still open, then fixed', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      const t = s.turns()
      expect(s.texts(t[2]!)).toContain(`PostToolUse:Edit hook additional context: kept for now: 1 file no longer type-checks against this change:\n${IMPORTER_BROKEN}\n${PARTIAL}\nfix them before you finish, or this change is undone\n`)
      expect(s.texts(t[3]!)).toContain(`PostToolUse:Edit hook additional context: still to fix before you finish (left by this turn's earlier writes): 1 problem:\n${TEST_BROKEN}\n`)
      expect(s.texts(t[4]!)).toContain('PostToolUse:Edit hook additional context: the problems this turn\'s earlier writes left in other files are fixed (the whole change is checked again when you finish)\n')
    })

    it('lets the stop through and keeps the whole rename; nothing was rolled back or undone', () => {
      expect(s.first.events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Renamed.' })
      for (const path of [UTILS, DEFU_TS, TEST]) expect(s.now(path)).toBe(s.original(path).replaceAll('isPlainObject', 'isPlainObj'))
      const all = s.turns().map(r => s.texts(r)).join('\n')
      for (const word of ['rolled back', 'not done:', 'undone at the end of the turn']) expect(all).not.toContain(word)
    })
  })

  const done: AgentStep[] = [{ text: 'Done.' }, { text: 'Done.' }, { text: 'Done.' }]

  describe('the rename stopped after its first step', () => {
    let s: Session
    beforeAll(async () => {
      s = await session('stopped', ws => [read(join(ws, UTILS)), { text: 'Rename it in its definition.', toolCalls: [rename(ws, UTILS, false)] }, ...done])
    }, 560_000)

    it('keeps the definition for now, then blocks the Stop twice with the importer it broke', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      const t = s.turns()
      expect(s.texts(t[2]!)).toContain(`PostToolUse:Edit hook additional context: kept for now: 1 file no longer type-checks against this change:\n${IMPORTER_BROKEN}\n${PARTIAL}\nfix them before you finish, or this change is undone\n`)
      for (const n of [1, 2]) {
        expect(s.texts(t[2 + n]!)).toContain(`Stop hook feedback:\nnot done: this turn leaves the project worse than it began (stop refused, ${n} of 2): 1 file no longer type-checks:\n${IMPORTER_BROKEN}\nfix them, then finish; stopping with them open undoes Edit on src/_utils.ts`)
      }
    })

    it('undoes the definition\'s write byte for byte at the third stop, and says so at the next prompt', () => {
      expect(s.first.events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Done.' })
      expect(s.now(UTILS)).toBe(s.original(UTILS))
      expect(git(s.ws, ['status', '--porcelain', '--', 'src', 'test'])).toBe('')
      expect(s.atNextSession().join('\n')).toContain(`SessionStart hook additional context: undone at the end of the turn: Edit on src/_utils.ts; it left the project worse than the turn began: 1 file no longer type-checks:\n${IMPORTER_BROKEN}\nto make this change, update every file it breaks in the same turn before you finish`)
    })
  })

  describe('a real bug its tests catch, with no fix', () => {
    let s: Session
    const bug = (ws: string) => ({ name: 'Edit', arguments: { file_path: join(ws, DEFU_TS), old_string: '[...value, ...object[key]]', new_string: '[...object[key]]' } })
    beforeAll(async () => {
      s = await session('bug', ws => [read(join(ws, DEFU_TS)), { text: 'Let the defaults\' array win.', toolCalls: [bug(ws)] }, ...done])
    }, 560_000)

    it('keeps it for now with the failing tests, then blocks the Stop twice with them', () => {
      expect(s.first.exitCode, s.first.stderr).toBe(0)
      const t = s.turns()
      expect(s.texts(t[2]!)).toContain(`PostToolUse:Edit hook additional context: kept for now: 2 tests in 1 file fail against this change:\n${BUG_FAILS}\nfix them before you finish, or this change is undone\n`)
      for (const n of [1, 2]) {
        expect(s.texts(t[2 + n]!)).toContain(`Stop hook feedback:\nnot done: this turn leaves the project worse than it began (stop refused, ${n} of 2): 2 tests in 1 file fail:\n${BUG_FAILS}\nfix them, then finish; stopping with them open undoes Edit on src/defu.ts`)
      }
    })

    it('is gone by the end of the turn, byte for byte', () => {
      expect(s.now(DEFU_TS)).toBe(s.original(DEFU_TS))
      expect(git(s.ws, ['status', '--porcelain', '--', 'src', 'test'])).toBe('')
      expect(s.atNextSession().join('\n')).toContain(`SessionStart hook additional context: undone at the end of the turn: Edit on src/defu.ts; it left the project worse than the turn began: 2 tests in 1 file fail:\n${BUG_FAILS}\nto make this change, update every file it breaks in the same turn before you finish`)
    })
  })
})
