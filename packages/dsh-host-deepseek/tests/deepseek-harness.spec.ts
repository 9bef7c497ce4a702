import { execFile } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureHarness, harnessCacheDir, registryReachable, type PinnedHarness } from '../../../scripts/deepseek-harness.ts'

// The suite inside the real DeepSeek Harness: the pinned @deepseek-ai/dsh on
// Node 22 (both from the npm registry, cached by scripts/deepseek-harness.ts),
// booted headless with a mock model on a copy of examples/demo/workspace.

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '../../..')
const hostDir = resolve(here, '..')

const cached = existsSync(join(harnessCacheDir(), '.complete'))
const reachable = cached || await registryReachable()
if (!reachable) console.warn('dsh-host-deepseek e2e skipped: the npm registry is unreachable, so the pinned DeepSeek Harness cannot be installed')

interface Boot { code: number | null; stdout: string; stderr: string }
interface Request { request: number; messages: Message[]; tools: string[] }
interface Message { role: string; content: Block[]; source: { kind: string; plugin?: string; callId?: string } }
interface Block { type: string; text?: string; toolCallId?: string; isError?: boolean; content?: Block[] }

const ORIGINAL_LINE = 'return Math.round(amount * (1 - percent / 100))'
const GOOD_LINE = 'return Math.round(amount * (1 - percent / 100)) // rounded to the cent'
const MAIN_SCRIPT = [
  { text: 'Reading money.', toolCalls: [{ name: 'read', arguments: { file_path: 'src/money.ts' } }] },
  { text: 'Note the rounding.', toolCalls: [{ name: 'edit', arguments: { file_path: 'src/money.ts', old_string: ORIGINAL_LINE, new_string: GOOD_LINE } }] },
  { text: 'Let add accept strings.', toolCalls: [{ name: 'edit', arguments: { file_path: 'src/money.ts', old_string: 'export function add(a: Cents, b: Cents): Cents {', new_string: 'export function add(a: Cents, b: string): Cents {' } }] },
  { text: 'Checkpoint.', toolCalls: [{ name: 'checkpoint', arguments: { summary: 'Noted the discount rounding in src/money.ts.', verified: ['cart totals are right — npx vitest run tests/cart.test.ts'], failed: ['add still takes only cents'], next: ['Accept strings in add.'] } }] },
  { text: 'Done.' },
]

const ROLLBACK = "rolled back: typecheck failed after edit on src/money.ts\nsrc/money.ts:5 TS2322 Type 'string' is not assignable to type 'number'.\n(typecheck stopped at the first new errors: possibly more in files not checked)"
const SUMMARY = 'Proof chain — latest harness-verified result per check in this session (failures first):\n✓ typecheck src/money.ts'
const RECEIPT = 'Recorded as given; 1 claim marked for the next agent:\n- "cart totals are right — npx vitest run tests/cart.test.ts": `vitest run` not seen run in this session — run it or drop the claim.'

const PROFILE_PATCH = `
- id: agent-default-model
  config:
    provider: dsh-mock
    model: mock
- id: session-title-llm
  disabled: true
- id: session-persistence-jsonl
  config:
    root: !!js dshHomePath('sessions')
    compression: none
- id: dsh-dstvalid
  config:
    tests: 'off'
    warmOnStart: false
- insert:
    - id: mock-model
      name: ./mock-model.mjs
`

describe.skipIf(!reachable)('the suite inside the DeepSeek Harness (pinned @deepseek-ai/dsh, Node 22)', () => {
  let harness: PinnedHarness
  let temp: string
  let home: string
  let profile: string
  let workspace: string
  let requests: Request[]
  let boot1: Boot

  function env(extra: Record<string, string>): NodeJS.ProcessEnv {
    return {
      ...process.env,
      PATH: [harness.shimDir, dirname(harness.node), process.env.PATH].join(':'),
      DSH_HOME: home,
      DSH_TELEMETRY_DISABLED: '1',
      ...extra,
    }
  }

  function dsh(args: string[], cwd: string, extra: Record<string, string> = {}): Promise<Boot> {
    return new Promise(done => {
      execFile(harness.node, [harness.launcher, ...args], { cwd, env: env(extra), maxBuffer: 64 * 1024 * 1024, timeout: 240_000 }, (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      })
    })
  }

  /** One headless task with the mock model replaying `script`; returns the boot and the requests the model got. */
  async function headless(cwd: string, name: string, script: object[], extra: Record<string, string> = {}, patches: string[] = []): Promise<{ boot: Boot; requests: Request[] }> {
    const scriptFile = join(temp, `${name}.jsonl`)
    const log = join(temp, `${name}.requests.jsonl`)
    writeFileSync(scriptFile, script.map(s => JSON.stringify(s)).join('\n') + '\n')
    const boot = await dsh(['--profile', 'headless', ...patches.flatMap(p => ['--patch', p]), 'go'], cwd, { DSH_MOCK_SCRIPT: scriptFile, DSH_MOCK_LOG: log, ...extra })
    const requests = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map(l => JSON.parse(l) as Request) : []
    return { boot, requests }
  }

  function toolResult(request: Request, callId: string): Block {
    const message = request.messages.find(m => m.source.kind === 'tool' && m.source.callId === callId)
    const block = message?.content.find(b => b.type === 'tool-result')
    if (!block) throw new Error(`no result for ${callId} in request ${request.request}`)
    return block
  }

  function pluginTexts(request: Request, plugin: string): string[] {
    return request.messages.filter(m => m.source.kind === 'plugin' && m.source.plugin === plugin).map(m => m.content.map(b => b.text ?? '').join(''))
  }

  function realLog(sessionId: string): { type: string }[] {
    const root = join(home, 'sessions')
    for (const project of readdirSync(root)) {
      const file = join(root, project, sessionId, 'session.jsonl')
      if (existsSync(file)) return readFileSync(file, 'utf8').trim().split('\n').slice(1).map(l => JSON.parse(l) as { type: string })
    }
    throw new Error(`no harness log for ${sessionId}`)
  }

  function sidecar(): { id: string; events: { type: string; data: Record<string, unknown> }[] } {
    const dir = join(workspace, '.dsh', 'sessions')
    const [file] = readdirSync(dir)
    return { id: file!.replace(/\.jsonl$/, ''), events: readFileSync(join(dir, file!), 'utf8').trim().split('\n').map(l => JSON.parse(l)) }
  }

  beforeAll(async () => {
    harness = await ensureHarness()
    temp = mkdtempSync(join(tmpdir(), 'dsh-host-e2e-'))
    home = join(temp, 'home')
    profile = join(home, 'profiles', 'headless')
    workspace = join(temp, 'workspace')
    cpSync(join(repoRoot, 'examples/demo/workspace'), workspace, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(workspace, 'node_modules'), 'dir')

    // What a user of the harness runs: add the host to a profile, then write the patch layer.
    const add = await dsh(['plugin', '--profile', 'headless', 'add', `link:${hostDir}`], temp)
    expect(add.code, add.stderr).toBe(0)
    copyFileSync(join(here, 'fixtures/mock-model.mjs'), join(profile, 'mock-model.mjs'))
    copyFileSync(join(here, 'fixtures/resume-probe.mjs'), join(profile, 'resume-probe.mjs'))
    writeFileSync(join(profile, 'cordis.patch.yml'), PROFILE_PATCH)

    const run = await headless(workspace, 'main', MAIN_SCRIPT)
    boot1 = run.boot
    requests = run.requests
  }, 600_000)

  afterAll(() => {
    if (temp) rmSync(temp, { recursive: true, force: true })
  })

  it('runs the headless task to its end with the suite loaded', () => {
    expect(boot1.code, boot1.stderr).toBe(0)
    expect(boot1.stdout.trim()).toBe('Done.')
    expect(requests).toHaveLength(5)
    expect(requests[0]!.tools).toContain('checkpoint')
  })

  it('keeps a good write and rolls a type-breaking one back byte for byte, telling the model why', () => {
    const original = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
    expect(readFileSync(join(workspace, 'src/money.ts'), 'utf8')).toBe(original.replace(ORIGINAL_LINE, GOOD_LINE))
    expect(toolResult(requests[2]!, 'call_1_0')).toMatchObject({ isError: false })
    const rolledBack = toolResult(requests[3]!, 'call_2_0')
    expect(rolledBack.isError).toBe(true)
    expect(rolledBack.content).toEqual([{ type: 'text', text: ROLLBACK }])
  })

  it('says each rollback in one line on stderr (stdout is the final answer only)', () => {
    expect(boot1.stderr.split('\n').filter(l => l.startsWith('dsh-host-deepseek: '))).toEqual([
      'dsh-host-deepseek: rolled back: typecheck failed after edit on src/money.ts',
    ])
  })

  it('shows the proof summary to the model at the next step', () => {
    expect(pluginTexts(requests[1]!, 'dsh-suite/proofchain')).toEqual([])
    expect(pluginTexts(requests[2]!, 'dsh-suite/proofchain')).toEqual([SUMMARY])
  })

  it('answers a checkpoint through the harness\'s registry, marking the unsupported claim', () => {
    expect(toolResult(requests[4]!, 'call_3_0')).toMatchObject({ isError: false, content: [{ type: 'text', text: RECEIPT }] })
  })

  it('keeps the suite\'s own events in the sidecar log, out of the harness\'s session log', () => {
    const { id, events } = sidecar()
    const ours = new Set(events.map(e => e.type))
    expect(ours).toContain('verify/run')
    expect(ours).toContain('claims/checkpoint')
    expect(ours).toContain('context/message')
    const theirs = realLog(id).map(e => e.type)
    expect(theirs).toContain('tool/result')
    expect(theirs.filter(t => /^(verify|claims|snapshot|proofchain)\//.test(t) || t === 'context/message')).toEqual([])
  })

  it('the harness resumes the session afterwards, and the next session gets the checkpoint handoff', async () => {
    const { id, events } = sidecar()
    const out = join(temp, 'resume.json')
    const overlay = join(temp, 'resume.patch.yml')
    writeFileSync(overlay, '- insert:\n    - id: resume-probe\n      name: ./resume-probe.mjs\n')
    const { boot, requests: next } = await headless(workspace, 'resume', [{ text: 'Resumed.' }], { DSH_RESUME_ID: id, DSH_RESUME_OUT: out }, [overlay])
    expect(boot.code, boot.stderr).toBe(0)
    const resumed = JSON.parse(readFileSync(out, 'utf8')) as { ok: boolean; events: number; error?: string }
    expect(resumed.error).toBeUndefined()
    expect(resumed.ok).toBe(true)
    expect(resumed.events).toBeGreaterThan(0)
    const handoff = pluginTexts(next[0]!, 'dsh-suite/claims')
    expect(handoff).toHaveLength(1)
    expect(handoff[0]).toContain('- cart totals are right — npx vitest run tests/cart.test.ts [unsupported: `vitest run` not seen run]')
    // The resumed mirror continued the sidecar log instead of starting over.
    expect(readFileSync(join(workspace, '.dsh', 'sessions', `${id}.jsonl`), 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(events.length)
  }, 300_000)

  it('a suite plugin disabled in the profile\'s patch layer is absent', async () => {
    const empty = mkdtempSync(join(temp, 'empty-'))
    writeFileSync(join(profile, 'cordis.patch.yml'), PROFILE_PATCH + '- id: dsh-claims\n  disabled: true\n')
    try {
      const { boot, requests: seen } = await headless(empty, 'disabled', [{ text: 'ok' }])
      expect(boot.code, boot.stderr).toBe(0)
      expect(seen[0]!.tools).not.toContain('checkpoint')
      expect(seen[0]!.tools).toContain('edit')
    } finally {
      writeFileSync(join(profile, 'cordis.patch.yml'), PROFILE_PATCH)
    }
  }, 300_000)

  it('in a harness version it does not know, the host says so in one line and loads nothing', async () => {
    const empty = mkdtempSync(join(temp, 'unknown-'))
    const overlay = join(temp, 'unknown.patch.yml')
    writeFileSync(overlay, "- id: dsh-host-options\n  config:\n    harnessVersions: ['0.0.1']\n")
    const { boot, requests: seen } = await headless(empty, 'unknown', [{ text: 'ok' }], {}, [overlay])
    expect(boot.code, boot.stderr).toBe(0)
    expect(boot.stderr.split('\n').filter(l => l.includes('dsh-host-deepseek'))).toEqual([
      'dsh-host-deepseek: DeepSeek Harness 0.1.0-rc.8 is not a harness this host knows (known: 0.0.1); no suite plugin loaded',
    ])
    expect(seen[0]!.tools).not.toContain('checkpoint')
    expect(existsSync(join(empty, '.dsh'))).toBe(false)
  }, 300_000)
})
