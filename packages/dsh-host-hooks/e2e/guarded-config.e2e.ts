/**
 * The guard's own configuration is guarded, and a rolled-back shell call
 * takes its commits with it: the real client and the real host, Claude
 * Code's payloads played by a script (claude-hooks.ts), on the demo shop
 * made a git repository; HOME is a temporary directory so the user-level
 * settings are the test's own.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADAPTERS, liveHooks, MESSAGES } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'
import { ADD, ADD_BROKEN, ClaudeSession, killHost, repoRoot, ROUNDING, GOOD, runHook, shopWorkspace, shown, type HookRun, hooksInTeamSettings } from './claude-hooks.ts'

const claude = ADAPTERS.find(a => a.agent === 'claude-code')!
const home = tempDir('dsh-guarded-home-')
process.env.HOME = home

let calls = 0

/** PreToolUse, the command run in the workspace (as Claude Code's Bash tool does), PostToolUse. */
async function bash(s: ClaudeSession, command: string): Promise<HookRun & { pre: HookRun }> {
  const id = `toolu_sh${++calls}`
  const pre = await runHook(s.ws, 'PreToolUse', { session_id: s.id, tool_name: 'Bash', tool_use_id: id, tool_input: { command } })
  const r = spawnSync('sh', ['-c', command], { cwd: s.ws, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'm', GIT_AUTHOR_EMAIL: 'm@x', GIT_COMMITTER_NAME: 'm', GIT_COMMITTER_EMAIL: 'm@x' } })
  const post = await runHook(s.ws, 'PostToolUse', {
    session_id: s.id, tool_name: 'Bash', tool_use_id: id, tool_input: { command },
    tool_response: { stdout: r.stdout, stderr: r.stderr, interrupted: false, isImage: false },
  })
  return { ...post, pre }
}

function dshVerify(ws: string) {
  const r = spawnSync(process.execPath, [join(repoRoot, 'packages/dsh-cli/bin/dsh.mjs'), 'proof', 'verify', '--vault', join(ws, '.dsh')], { encoding: 'utf8' })
  return { status: r.status, stdout: r.stdout }
}

const git = (ws: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', ...args], { cwd: ws, encoding: 'utf8' }).trim()
const DROP_HOOKS = `python3 -c "import json;p='.claude/settings.json';d=json.load(open(p));d.pop('hooks');json.dump(d,open(p,'w'))"`
const SED_COMMIT = "sed -i 's/b: Cents): Cents {/b: string): Cents {/' src/money.ts && git add -A && git commit -qm wip"

describe('the guard guards its own configuration and takes back commits', () => {
  let ws = ''
  let settings = ''
  let userSettings = ''
  let head = ''
  let original = ''
  let dropped: HookRun & { pre: HookRun }
  let userDropped: HookRun & { pre: HookRun }
  let disabled: HookRun & { pre: HookRun }
  let allowed: HookRun & { pre: HookRun }
  let nextSession: HookRun & { pre: HookRun }
  let committed: HookRun & { pre: HookRun }
  let committedHead = ''
  let committedMoney = ''
  let verifiedBefore: ReturnType<typeof dshVerify>
  let verifiedAfter: ReturnType<typeof dshVerify>
  let forged = ''
  let afterForge: HookRun

  beforeAll(async () => {
    ws = shopWorkspace('dsh-guarded-config-')
    hooksInTeamSettings(ws)
    writeFileSync(join(ws, '.gitignore'), '.dsh/\nnode_modules\n')
    git(ws, 'init', '-q', '-b', 'main')
    git(ws, 'add', '-A')
    git(ws, 'commit', '-q', '-m', 'shop')
    head = git(ws, 'rev-parse', 'HEAD')
    original = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    settings = readFileSync(join(ws, '.claude/settings.json'), 'utf8')
    // The same hooks at user level too (a user who installed them there).
    mkdirSync(join(home, '.claude'), { recursive: true })
    userSettings = JSON.stringify({ theme: 'dark', hooks: JSON.parse(settings).hooks }, null, 2)
    writeFileSync(join(home, '.claude/settings.json'), userSettings)

    const s1 = new ClaudeSession(ws)
    await s1.start()
    await s1.prompt('Tidy up.')
    await s1.edit('src/money.ts', ROUNDING, GOOD)
    await s1.edit('src/money.ts', GOOD, ROUNDING)
    dropped = await bash(s1, DROP_HOOKS)
    userDropped = await bash(s1, `python3 -c "import json,os;p=os.path.expanduser('~/.claude/settings.json');d=json.load(open(p));d['hooks'].pop('PreToolUse');json.dump(d,open(p,'w'))"`)
    disabled = await bash(s1, `printf '{"disableAllHooks": true}' > .claude/settings.local.json`)
    allowed = await bash(s1, `python3 -c "import json;p='.claude/settings.json';d=json.load(open(p));d['permissions']={'allow':['Bash(ls:*)']};json.dump(d,open(p,'w'),indent=2)"`)
    await s1.stop()

    const s2 = new ClaudeSession(ws)
    await s2.start()
    await s2.prompt('Let add take strings.')
    nextSession = await s2.edit('src/money.ts', ADD, ADD_BROKEN)
    committed = await bash(s2, SED_COMMIT)
    committedHead = git(ws, 'rev-parse', 'HEAD')
    committedMoney = readFileSync(join(ws, 'src/money.ts'), 'utf8')
    await s2.stop()

    // The chain as the agent's shell can forge it: failures turned into passes, hashes recomputed, re-sealed with the key store's key.
    verifiedBefore = dshVerify(ws)
    forged = spawnSync(process.execPath, [join(repoRoot, 'packages/dsh-host-hooks/e2e/forge-chain.mjs'), join(ws, '.dsh'), repoRoot], { encoding: 'utf8' }).stdout
    verifiedAfter = dshVerify(ws)
    afterForge = await s2.prompt('Anything else?')
  }, 500_000)

  afterAll(() => killHost(ws))

  it('rolls back a shell command that drops the hooks from .claude/settings.json, and says why', () => {
    expect(shown(dropped)).toBe(MESSAGES.configGuarded('Bash', ['.claude/settings.json']))
    expect(dropped.answer?.decision).toBe('block')
  })

  it('puts back the user-level settings the same way', () => {
    expect(shown(userDropped)).toBe(MESSAGES.configGuarded('Bash', ['~/.claude/settings.json']))
    expect(readFileSync(join(home, '.claude/settings.json'), 'utf8')).toBe(userSettings)
  })

  it('takes out a disableAllHooks the call added', () => {
    expect(shown(disabled)).toBe(MESSAGES.configGuarded('Bash', ['.claude/settings.local.json']))
  })

  it('leaves the rest of the settings to the agent', () => {
    expect(shown(allowed)).toBe('')
    expect(JSON.parse(readFileSync(join(ws, '.claude/settings.json'), 'utf8')).permissions).toEqual({ allow: ['Bash(ls:*)'] })
  })

  it('the next session is still guarded: every hook entry live, a type break rolled back', () => {
    expect(liveHooks(claude, ws, home).missing).toEqual([])
    expect(JSON.parse(readFileSync(join(ws, '.claude/settings.json'), 'utf8')).hooks).toEqual(JSON.parse(settings).hooks)
    expect(shown(nextSession).split('\n')[0]).toBe('rolled back: typecheck failed after Edit on src/money.ts')
  })

  it('sed <type break> && git add -A && git commit: HEAD back where it was, the tree restored, the model told', () => {
    expect(committedHead).toBe(head)
    expect(committedMoney).toBe(original)
    expect(git(ws, 'status', '--porcelain')).toBe('M .claude/settings.json')
    const lines = shown(committed).split('\n')
    expect(lines[0]).toBe('rolled back: typecheck failed after Bash on src/money.ts')
    expect(lines.at(-1)).toMatch(new RegExp(`^git: main back to ${head.slice(0, 7)} \\(from [0-9a-f]{7}\\), index restored \\(the undone commits stay in git reflog\\)$`))
    expect(git(ws, 'reflog', '--format=%gs', 'main').split('\n')).toEqual(['dsh: rolled back (typecheck failed after Bash on src/money.ts)', 'commit: wip', 'commit (initial): shop'])
  })

  it('a chain forged from the agent\'s shell and re-sealed does not verify while the host that wrote it runs', () => {
    expect(verifiedBefore.status).toBe(0)
    expect(verifiedBefore.stdout).toMatch(/\n  checked against the live hooks host \(pid \d+\), which holds the head its suite wrote: seq \d+\n/)
    expect(forged).toMatch(/^forged [1-9]\d* failed entries/)
    expect(verifiedAfter.status).toBe(1)
    expect(verifiedAfter.stdout).toMatch(/^FAILED .*proofchain\.jsonl\n  not what dsh wrote: it ends at seq \d+ \w{12}, but the live hooks host \(pid \d+\) that writes it last wrote seq \d+ \w{12}: rewritten outside dsh/)
  })

  it('the host notices the rewrite at the next hook call and tells the model', () => {
    expect(shown(afterForge).split('\n\n')[0]).toMatch(/^dsh: .*proofchain\.jsonl ends at seq \d+ \w{12}, but this host's suite last wrote seq \d+ \w{12}: the chain was rewritten outside dsh; its entries are no longer evidence of what ran \(dsh proof verify reports it\)$/)
  })
})
