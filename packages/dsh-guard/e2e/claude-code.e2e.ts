/**
 * The distributable guard as a user gets it, inside the real Claude Code
 * (the pinned release and the current one), offline in a loopback-only
 * namespace: the package is built and packed, installed from its tarball
 * into an empty prefix (`npm i -g --prefix`), and guards a copy of the demo
 * workspace two ways —
 *
 * - the npm install: `dsh-guard setup --agent claude-code` in the project;
 * - the plugin install: `claude plugin marketplace add` of a marketplace
 *   holding the installed package, `claude plugin install dsh-guard@…`.
 *
 * One session each: a Read, a no-op `Bash true`, a type-breaking Edit (rolled
 * back, the model told why in the suite's words), a good Edit (kept). Then
 * the uninstall leaves every file the install touched as it was, byte for
 * byte, but Claude Code's own state (`~/.claude.json`, rewritten at every
 * run of it: there only our entry must be gone).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentCliVersions, ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { MESSAGES } from 'dsh-host-hooks'
import { anthropicModel, isClaudeTurnRequest, pick, runClaude, runInLoopback, startModelServer, tempDir, treeChanges, type AgentRun, type FileTree, type ModelServer } from 'dsh-testkit'
import { ADD, ADD_STRING, agentFiles, GOOD, guardE2eSkip, installPackage, ORIGINAL, project, ROUNDING, stopHost, type InstalledGuard } from './guard-e2e.ts'

const TYPE_BREAK = "rolled back: typecheck failed after Edit on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'."

/** Claude Code's own state, rewritten at every run of it (startups, tips, the projects it ran in): not an install's. */
const CLAUDE_STATE = /^home\/\.claude\.json(\.backup)?$|^home\/\.claude\/(backups|projects|statsig|todos|shell-snapshots|session-env|file-history|debug)\//

/**
 * What Claude Code's `plugin uninstall` and `plugin marketplace remove` leave
 * of a plugin install (2.1.197 and 2.1.337): its records (the settings file
 * and the plugin lists it created, without the plugin), and the plugin's
 * cached copy, which nothing runs any more.
 */
const CLAUDE_KEEPS = ['home/.claude/plugins/installed_plugins.json', 'home/.claude/plugins/known_marketplaces.json', 'home/.claude/settings.json']
const CLAUDE_CACHE = 'home/.claude/plugins/cache/dsh-e2e/'

const skip = await guardE2eSkip('Claude Code')

/** Claude Code's home with the workspace trusted (as after its trust dialog), merged with what is there. */
function trust(home: string, ws: string): void {
  const file = join(home, '.claude.json')
  const config = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as { projects?: Record<string, object> } : {}
  config.projects = { ...config.projects, [ws]: { ...config.projects?.[ws], hasTrustDialogAccepted: true } }
  writeFileSync(file, JSON.stringify(config, null, 2))
}

async function session(bin: string, ws: string, home: string): Promise<{ run: AgentRun; server: ModelServer }> {
  const money = join(ws, 'src/money.ts')
  const server = await startModelServer(anthropicModel([
    { text: 'Reading money.', toolCalls: [{ name: 'Read', arguments: { file_path: money } }] },
    { text: 'Nothing to run.', toolCalls: [{ name: 'Bash', arguments: { command: 'true', description: 'Nothing' } }] },
    { text: 'Let add take strings.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ADD, new_string: ADD_STRING } }] },
    { text: 'Note the rounding.', toolCalls: [{ name: 'Edit', arguments: { file_path: money, old_string: ROUNDING, new_string: GOOD } }] },
    { text: 'Done.' },
  ]))
  const run = await runClaude({ bin, workspace: ws, prompt: 'Tidy up the money module.', server, home, extraArgs: ['--allowedTools', 'Bash'], timeoutMs: 300_000 })
  return { run, server }
}

type Block = { type?: string; text?: string; content?: unknown }
/** A message's text, whatever its role: Claude Code 2.1.332 and later send a hook's block as a `system` message, 2.1.197 as a user one. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Block[]).map(b => (typeof b.text === 'string' ? b.text : messageText(b.content))).join('\n')
}

/** Everything the model was shown in the session's turns. */
const shown = (server: ModelServer) => server.requests.filter(isClaudeTurnRequest)
  .flatMap(r => ((r.body as { messages?: { content: unknown }[] }).messages ?? []).map(m => messageText(m.content))).join('\n')

describe.skipIf(!!skip)('dsh-guard, packed and installed, in the real Claude Code', () => {
  let installed: InstalledGuard
  beforeAll(() => {
    installed = installPackage()
  }, 600_000)

  it('ships the client, the TypeScript worker, the vitest runner files and a cordis.yml naming its own plugin files', () => {
    const { pkg } = installed
    for (const f of ['assets/packages/dsh-host-hooks/bin/dsh-hook', 'assets/packages/dsh-dstvalid/src/toolchains/typescript/worker.mjs', 'assets/packages/dsh-dstvalid/src/toolchains/vitest/server.mjs', 'assets/packages/dsh-dstvalid/src/toolchains/vitest/reporter.mjs', '.claude-plugin/plugin.json', 'hooks/hooks.json', 'gemini/gemini-extension.json', '.codex-plugin/plugin.json', 'codex/hooks.json', 'hook']) {
      expect(existsSync(join(pkg, f)), f).toBe(true)
    }
    const cordis = readFileSync(join(pkg, 'assets/cordis.yml'), 'utf8')
    for (const name of cordis.matchAll(/name: (\S+)/g)) expect(existsSync(join(pkg, 'assets', name[1]!)), name[1]).toBe(true)
    expect(readdirSync(join(pkg, 'node_modules')).filter(f => !f.startsWith('.'))).toEqual(['typescript'])
  })

  for (const version of agentCliVersions('claude')) {
    const label = version ? `Claude Code ${version} (current)` : 'Claude Code (pinned)'

    describe(`${label}, npm install + dsh-guard setup`, () => {
      let ws = ''
      let home = ''
      let result: { run: AgentRun; server: ModelServer }
      let homeBefore = ''
      let setupOut = ''
      let before: FileTree
      let touched: string[] = []
      beforeAll(async () => {
        const claude = await ensureAgentCli('claude', () => {}, version)
        ws = project()
        home = tempDir('dsh-guard-home-')
        trust(home, ws)
        homeBefore = readFileSync(join(home, '.claude.json'), 'utf8')
        before = agentFiles(ws, home)
        // As after `npm i -g`: dsh-guard on PATH (Claude Code's local files still name the package by its path).
        setupOut = execFileSync(installed.bin, ['setup', '--agent', 'claude-code'], { cwd: ws, env: { ...process.env, HOME: home, PATH: installed.path }, encoding: 'utf8' })
        touched = treeChanges(before, agentFiles(ws, home))
        result = await session(claude, ws, home)
      }, 600_000)
      afterAll(async () => {
        await result?.server.close()
        if (ws) await stopHost(ws)
      })

      it('says what it wrote, and where', () => {
        expect(setupOut).toBe([
          'installed dsh hooks for claude-code (project-level: this project only):',
          '  .claude/settings.local.json: created',
          '  ~/.claude.json: updated',
          `From the next claude-code session in ${ws}, a write that makes the project worse is rolled back and the agent told why (one that only breaks other files is kept for now; the turn cannot end with it).`,
          'The guard of this project is starting (status says when it is up).',
          '',
        ].join('\n'))
      })

      it('rolls back the type break, keeps the good edit, and tells the model why', () => {
        expect(result.run.exitCode, result.run.stderr).toBe(0)
        expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(ORIGINAL.replace(ROUNDING, GOOD))
        expect(shown(result.server)).toContain(TYPE_BREAK)
        // The guard answered every call: the model never got the "not verified" note.
        expect(shown(result.server)).not.toContain(MESSAGES.notVerified('').slice(0, 20))
      })

      it('writes nothing a team commits, and uninstall leaves the files as they were', () => {
        expect(existsSync(join(ws, '.mcp.json'))).toBe(false)
        expect(existsSync(join(ws, '.claude/settings.json'))).toBe(false)
        const status = execFileSync(installed.bin, ['status'], { cwd: ws, env: { ...process.env, HOME: home }, encoding: 'utf8' })
        expect(status).toMatch(new RegExp(`^workspace ${ws}\nclaude-code: installed \\(6 hook entries live in \\.claude/settings\\.local\\.json\\)\nhost: up, (warm|measuring: .+) \\(pid `))
        execFileSync(installed.bin, ['uninstall'], { cwd: ws, env: { ...process.env, HOME: home }, encoding: 'utf8' })
        expect(existsSync(join(ws, '.claude'))).toBe(false)
        expect(touched).toEqual(['home/.claude.json', 'ws/.claude/settings.local.json'])
        const mine = touched.filter(f => !CLAUDE_STATE.test(f))
        expect(pick(agentFiles(ws, home), mine)).toEqual(pick(before, mine))
        // Claude Code rewrote its own file during the session: only our entry is gone.
        const after = JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')) as { projects: Record<string, Record<string, unknown>> }
        expect(after.projects[ws]!.mcpServers).toBeUndefined()
        expect(JSON.parse(homeBefore).projects[ws]).toEqual({ hasTrustDialogAccepted: true })
      })
    })

    describe(`${label}, plugin install from a marketplace`, () => {
      let ws = ''
      let home = ''
      let claude = ''
      let result: { run: AgentRun; server: ModelServer }
      let before: FileTree
      let touched: string[] = []
      const cli = (args: string[]) => runInLoopback([claude, ...args], { cwd: home, env: { HOME: home, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' }, timeoutMs: 120_000 })
      beforeAll(async () => {
        claude = await ensureAgentCli('claude', () => {}, version)
        ws = project()
        home = tempDir('dsh-guard-home-')
        trust(home, ws)
        // A marketplace as a user's would list it, with the installed package as its plugin.
        const market = tempDir('dsh-guard-market-')
        mkdirSync(join(market, '.claude-plugin'))
        cpSync(installed.pkg, join(market, 'dsh-guard'), { recursive: true })
        writeFileSync(join(market, '.claude-plugin/marketplace.json'), JSON.stringify({ name: 'dsh-e2e', owner: { name: 'dsh' }, plugins: [{ name: 'dsh-guard', source: './dsh-guard', description: 'dsh-guard' }] }))
        before = agentFiles(ws, home)
        for (const args of [['plugin', 'marketplace', 'add', market], ['plugin', 'install', 'dsh-guard@dsh-e2e']]) {
          const r = await cli(args)
          if (r.exitCode !== 0) throw new Error(`claude ${args.join(' ')}: ${r.stderr || r.stdout}`)
        }
        touched = treeChanges(before, agentFiles(ws, home)).filter(f => !CLAUDE_STATE.test(f))
        result = await session(claude, ws, home)
      }, 600_000)
      afterAll(async () => {
        await result?.server.close()
        if (ws) await stopHost(ws)
      })

      it('rolls back the type break, keeps the good edit, and tells the model why', () => {
        expect(result.run.exitCode, result.run.stderr).toBe(0)
        expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(ORIGINAL.replace(ROUNDING, GOOD))
        expect(shown(result.server)).toContain(TYPE_BREAK)
      })

      it('writes nothing into the project but the vault; uninstall takes the plugin out of Claude Code\'s settings', async () => {
        expect(readdirSync(ws).filter(f => f.startsWith('.'))).toEqual(['.dsh'])
        for (const args of [['plugin', 'uninstall', 'dsh-guard@dsh-e2e'], ['plugin', 'marketplace', 'remove', 'dsh-e2e']]) {
          const r = await cli(args)
          expect(r.exitCode, r.stderr || r.stdout).toBe(0)
        }
        const settings = readFileSync(join(home, '.claude/settings.json'), 'utf8')
        expect(settings).not.toContain('dsh')
        expect(touched).toContain('home/.claude/settings.json')
        const after = agentFiles(ws, home)
        const left = treeChanges(pick(before, touched), pick(after, touched))
        expect(left.filter(f => !f.startsWith(CLAUDE_CACHE))).toEqual(CLAUDE_KEEPS)
        for (const f of CLAUDE_KEEPS) expect(after[f], f).not.toContain('dsh-e2e')
      })
    })
  }
})
