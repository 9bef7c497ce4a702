/**
 * The distributable guard as a Codex user gets it, inside the real Codex
 * CLI (the pin, which is today's npm release too), offline in a
 * loopback-only namespace: packed, installed from its tarball into an empty
 * prefix on PATH, guarding a copy of the demo workspace two ways —
 *
 * - `dsh-guard setup --agent codex` in the project (`.codex/`, a team's
 *   files: they run dsh-guard-hook and dsh-guard from PATH, no path in them);
 * - Codex's plugin install: `codex plugin marketplace add` of a local
 *   marketplace holding the package, `codex plugin add dsh-guard@…` (Codex
 *   copies it into its plugin cache and enables it).
 *
 * One session each, one file per call: a patch that breaks the type-check
 * (rolled back, the model given the suite's text for the tool's output),
 * then a good patch (kept). Then the uninstall leaves every file the
 * install touched as it was, byte for byte.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { agentCliVersions, ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { MESSAGES } from 'dsh-host-hooks'
import { pick, responsesModel, responsesToolOutputs, runCodex, runInLoopback, startModelServer, tempDir, writeCodexConfig, type AgentRun, type ModelServer } from 'dsh-testkit'
import { ADD, ADD_STRING, agentFiles, agentInstallChecks, GOOD, guardE2eSkip, hostState, installPackage, installRoute, ORIGINAL, ROUNDING, typeBreak, type InstalledGuard } from './guard-e2e.ts'

const skip = await guardE2eSkip('Codex')

/** apply_patch replaces whole lines: a body line carries its indentation. */
const line = (text: string) => (text.startsWith('export') ? text : `  ${text}`)
const patch = (from: string, to: string) => `*** Begin Patch\n*** Update File: src/money.ts\n@@\n-${line(from)}\n+${line(to)}\n*** End Patch\n`

async function session(bin: string, ws: string, home: string, path: string): Promise<{ run: AgentRun; server: ModelServer }> {
  const server = await startModelServer(responsesModel([
    { text: 'Let add take strings.', toolCalls: [{ name: 'apply_patch', arguments: patch(ADD, ADD_STRING) }] },
    { text: 'Note the rounding.', toolCalls: [{ name: 'apply_patch', arguments: patch(ROUNDING, GOOD) }] },
    { text: 'Done.' },
  ]))
  const run = await runCodex({ bin, workspace: ws, prompt: 'Tidy up the money module.', server, home, env: { PATH: path }, timeoutMs: 300_000 })
  return { run, server }
}

/** What the model was given for each call, by call id (the last time it saw it). */
const outputs = (server: ModelServer) => Object.fromEntries(server.requests.flatMap(responsesToolOutputs).map(o => [o.callId, o.output]))

function expectGuarded(result: { run: AgentRun; server: ModelServer }, ws: string): void {
  expect(result.run.exitCode, result.run.stderr).toBe(0)
  const out = outputs(result.server)
  expect(out.call_0_0).toBe(typeBreak('apply_patch'))
  expect(out.call_1_0).toMatch(/^Exit code: 0\n[\s\S]*M src\/money\.ts/)
  expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(ORIGINAL.replace(ROUNDING, GOOD))
  const shown = result.server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
  expect(shown).not.toContain(MESSAGES.notVerified('').slice(0, 20))
}

describe.skipIf(!!skip)('dsh-guard, packed and installed, in the real Codex CLI', () => {
  let installed: InstalledGuard
  beforeAll(() => {
    installed = installPackage()
  }, 600_000)

  for (const version of agentCliVersions('codex')) {
    const label = version ? `Codex ${version} (current)` : 'Codex (pinned; the current release too)'

    describe(`${label}, npm install + dsh-guard setup --agent codex`, () => {
      let setupOut = ''
      const guard = (args: string[]) => execFileSync(installed.bin, args, { cwd: r.ws, env: { ...process.env, HOME: r.home, CODEX_HOME: r.home, PATH: installed.path }, encoding: 'utf8' })
      let codex = ''
      const r = installRoute({
        homePrefix: 'dsh-guard-codex-home-',
        prepare: async ({ ws, home }) => {
          codex = await ensureAgentCli('codex', () => {}, version)
          writeCodexConfig(home, ws)
        },
        install: () => (setupOut = guard(['setup', '--agent', 'codex'])),
        session: ({ ws, home }) => session(codex, ws, home, installed.path),
      })

      it('says what it wrote, at which level, and that no path of this machine is in it', () => {
        expect(setupOut).toBe([
          'installed dsh hooks for codex (project-level: this project only):',
          '  .codex/hooks.json: created',
          '  .codex/config.toml: created',
          'They run dsh-guard-hook and dsh-guard from PATH: no path of this machine is in them.',
          `From the next codex session in ${r.ws}, a write that makes the project worse is rolled back and the agent told why (one that only breaks other files is kept for now; the turn cannot end with it).`,
          'The guard of this project is starting (status says when it is up).',
          '',
        ].join('\n'))
        expect(r.touched).toEqual(['ws/.codex/config.toml', 'ws/.codex/hooks.json'])
        for (const f of r.touched) {
          expect(r.files[f], f).not.toContain(r.ws)
          expect(r.files[f], f).not.toContain(installed.prefix)
        }
      })

      it('rolls back the type break with the suite\'s text, keeps the good patch', () => {
        expectGuarded(r.result!, r.ws)
      })

      it('status reads the entries that name no path as this project\'s; uninstall leaves every file the install touched as it was', () => {
        expect(guard(['status'])).toMatch(new RegExp(`^workspace ${r.ws}\ncodex: installed \\(5 hook entries live in \\.codex/hooks\\.json\\)\n`))
        // The guarded session left this project's host running: uninstall stops it.
        const removed = guard(['uninstall'])
        const stopped = /^removed dsh hooks for codex \(project-level: this project only\):\n  \.codex\/hooks\.json: restored\n  \.codex\/config\.toml: restored\nstopped the guard of this project \(pid (\d+)\)\n$/.exec(removed)
        expect(stopped, removed).not.toBeNull()
        expect(hostState(Number(stopped![1]))).toMatch(/^(gone|Z|X)$/)
        expect(pick(agentFiles(r.ws, r.home), r.touched)).toEqual(pick(r.before, r.touched))
      })
    })

    describe(`${label}, codex plugin marketplace add + codex plugin add`, () => {
      let codex = ''
      const cli = async (args: string[]) => {
        const out = await runInLoopback([codex, ...args], { cwd: r.home, env: { HOME: r.home, CODEX_HOME: r.home, PATH: installed.path }, timeoutMs: 120_000 })
        if (out.exitCode !== 0) throw new Error(`codex ${args.join(' ')}: ${out.stderr || out.stdout}`)
        return out.stdout
      }
      let market = ''
      const r = installRoute({
        homePrefix: 'dsh-guard-codex-home-',
        prepare: async ({ ws, home }) => {
          codex = await ensureAgentCli('codex', () => {}, version)
          writeCodexConfig(home, ws)
          // A marketplace as a user's would list it (Codex reads Claude Code's marketplace.json), the installed package its plugin.
          market = tempDir('dsh-guard-market-')
          mkdirSync(join(market, '.claude-plugin'))
          cpSync(installed.pkg, join(market, 'dsh-guard'), { recursive: true })
          writeFileSync(join(market, '.claude-plugin/marketplace.json'), JSON.stringify({ name: 'dsh-e2e', owner: { name: 'dsh' }, plugins: [{ name: 'dsh-guard', source: './dsh-guard', description: 'dsh-guard' }] }))
        },
        install: async () => {
          await cli(['plugin', 'marketplace', 'add', market])
          await cli(['plugin', 'add', 'dsh-guard@dsh-e2e'])
        },
        session: ({ ws, home }) => session(codex, ws, home, installed.path),
      })

      agentInstallChecks(r, {
        installs: ['installs and enables the plugin in Codex\'s home, nothing in the project', 'home/config.toml', 'home/plugins/cache/dsh-e2e/dsh-guard/0.1.0/.codex-plugin/plugin.json'],
        guarded: ['rolls back the type break with the suite\'s text, keeps the good patch', () => expectGuarded(r.result!, r.ws)],
        uninstall: ['codex plugin remove and marketplace remove leave every file the install touched as it was', async () => {
          await cli(['plugin', 'remove', 'dsh-guard@dsh-e2e'])
          await cli(['plugin', 'marketplace', 'remove', 'dsh-e2e'])
        }],
      })
    })
  }
})
