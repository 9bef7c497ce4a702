/**
 * `dsh undo` under the real Claude Code and Codex CLIs (the pinned npm
 * packages, offline in a loopback-only network namespace, on scripted
 * models), guarded through `dsh hooks install`: a session keeps two writes —
 * an edit, and a `sed -i` through the agent's shell tool; `dsh undo` takes
 * back the first; the file is as before it, the second stays; the same
 * session, resumed, carries the note in its next request.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { ensureAgentCli, type AgentCliName } from '../../../scripts/agent-clis.ts'
import { registryReachable } from '../../../scripts/deepseek-harness.ts'
import { runCommand } from 'dsh-common'
import { ADAPTERS, hostStatus, installHooks, writeHostSettings } from 'dsh-host-hooks'
import {
  anthropicModel, isClaudeTurnRequest, loopbackUnavailable, responsesModel, runClaude, runCodex, startModelServer, tempDir,
  type AgentRun, type AgentStep, type AgentToolCall, type ModelReply, type ModelRequest, type ModelServer,
} from 'dsh-testkit'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const bin = join(repoRoot, 'packages/dsh-cli/src/bin.ts')
const ORIGINAL = readFileSync(join(repoRoot, 'examples/demo/workspace/src/money.ts'), 'utf8')
const FORMAT = readFileSync(join(repoRoot, 'examples/demo/workspace/src/format.ts'), 'utf8')
const ROUNDING = 'return Math.round(amount * (1 - percent / 100))'
const SED = "sed -i '1i // Formats cents as dollars.' src/format.ts"

interface Agent {
  label: string
  cli: AgentCliName
  adapter: string
  /** The first session's steps: read if the agent must, edit money.ts, run the sed. */
  steps(money: string): AgentStep[]
  model(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply
  run(options: { bin: string; workspace: string; prompt: string; server: ModelServer; home: string }, resume?: AgentRun): Promise<AgentRun>
  /** The turn requests, in order. */
  turns(requests: readonly ModelRequest[]): ModelRequest[]
}

const edit = (name: string, args: Record<string, unknown> | string): AgentToolCall => ({ name, arguments: args })

const AGENTS: Agent[] = [
  {
    label: 'Claude Code', cli: 'claude', adapter: 'claude-code',
    steps: money => [
      { text: 'Reading money.', toolCalls: [edit('Read', { file_path: money })] },
      { text: 'Note the rounding.', toolCalls: [edit('Edit', { file_path: money, old_string: ROUNDING, new_string: `${ROUNDING} // to the cent` })] },
      { text: 'Document format.', toolCalls: [edit('Bash', { command: SED, description: 'Add a comment' })] },
    ],
    model: anthropicModel,
    turns: requests => requests.filter(isClaudeTurnRequest),
    run: (options, resume) => {
      const sessionId = resume?.events.find(e => e.type === 'result')?.session_id as string | undefined
      return runClaude({ ...options, extraArgs: ['--allowedTools', 'Bash', ...(sessionId ? ['--resume', sessionId] : [])], timeoutMs: 240_000 })
    },
  },
  {
    label: 'Codex', cli: 'codex', adapter: 'codex',
    steps: () => [
      { text: 'Note the rounding.', toolCalls: [edit('apply_patch', `*** Begin Patch\n*** Update File: src/money.ts\n@@\n-  ${ROUNDING}\n+  ${ROUNDING} // to the cent\n*** End Patch\n`)] },
      { text: 'Document format.', toolCalls: [edit('exec_command', { cmd: SED })] },
    ],
    model: responsesModel,
    turns: requests => [...requests],
    run: (options, resume) => {
      const thread = resume?.events.find(e => e.type === 'thread.started')?.thread_id as string | undefined
      return runCodex({ ...options, ...(thread ? { extraArgs: ['resume', thread] } : {}), timeoutMs: 240_000 })
    },
  },
]

const offline = (await registryReachable()) ? undefined : 'the npm registry is unreachable, so the pinned agent CLIs cannot be installed'
const skip = offline ?? (await loopbackUnavailable())
if (skip) console.warn(`dsh undo agent e2e skipped: ${skip}`)

const hosts: string[] = []
afterAll(async () => {
  for (const ws of hosts) {
    const status = await hostStatus(join(ws, '.dsh'))
    if (status?.pid) process.kill(status.pid, 'SIGTERM')
  }
})

const dsh = (args: string[]) => runCommand([process.execPath, '--import', 'tsx', bin, ...args], { cwd: repoRoot, timeoutMs: 120_000, env: { NODE_ENV: 'test' } })

describe.skipIf(!!skip).each(AGENTS)('dsh undo with the real $label CLI', agent => {
  it('takes back the first of two kept writes (the second through the shell): the file as before, the second kept, the note in the next request', async () => {
    const cliBin = await ensureAgentCli(agent.cli)
    const dir = tempDir(`dsh-undo-${agent.cli}-`)
    const ws = join(dir, 'shop')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    const home = tempDir(`dsh-undo-${agent.cli}-home-`)
    if (agent.cli === 'claude') writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }))
    // The install's machine-specific part (Claude Code's local scope) goes into the test's home, never the user's.
    installHooks(ADAPTERS.find(a => a.agent === agent.adapter)!, ws, { home })
    // Each write's whole verdict in its own hook answer, as these runs assert it (background verdicts off in the workspace's host settings: the one switch every agent passes on to the host).
    writeHostSettings(join(ws, '.dsh'), { background: false })
    hosts.push(ws)
    const server = await startModelServer(agent.model([...agent.steps(join(ws, 'src/money.ts')), { text: 'Done.' }, { text: 'Noted.' }]))
    try {
      const options = { bin: cliBin, workspace: ws, server, home }
      const first = await agent.run({ ...options, prompt: 'Tidy up.' })
      expect(first.exitCode, first.stderr).toBe(0)
      const money = readFileSync(join(ws, 'src/money.ts'), 'utf8')
      expect(money).toBe(ORIGINAL.replace(ROUNDING, `${ROUNDING} // to the cent`))
      expect(readFileSync(join(ws, 'src/format.ts'), 'utf8')).toBe(`// Formats cents as dollars.\n${FORMAT}`)

      const listed = await dsh(['undo', '--list', '--json', '--workspace', ws])
      const records = JSON.parse(listed.stdout) as { id: string; paths: string[]; undoable: boolean; sessionId: string }[]
      expect(records.map(r => [r.paths, r.undoable])).toEqual([[['src/format.ts'], true], [['src/money.ts'], true]])
      const target = records.find(r => r.paths[0] === 'src/money.ts')!
      const undone = await dsh(['undo', target.id, '--workspace', ws])
      expect(undone.exitCode, undone.stderr).toBe(0)
      expect(undone.stdout.split('\n')[0]).toMatch(/^took back call \S+ of session \S+: restored src\/money\.ts$/)
      expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(ORIGINAL)
      expect(readFileSync(join(ws, 'src/format.ts'), 'utf8')).toBe(`// Formats cents as dollars.\n${FORMAT}`)

      const second = await agent.run({ ...options, prompt: 'Anything else?' }, first)
      expect(second.exitCode, second.stderr).toBe(0)
      const next = JSON.stringify(agent.turns(server.requests).at(-1)!.body)
      expect(next).toMatch(/note: a person took back your call \S+ \(\S+ src\/money\.ts\) with dsh undo: restored src\/money\.ts\. Read these files again before you edit them\./)
    } finally {
      await server.close()
    }
  })
})
