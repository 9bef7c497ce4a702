/**
 * The distributable guard as a Gemini CLI user gets it, inside the real
 * Gemini CLI (the pin, which is today's npm release too), offline in a
 * loopback-only namespace: packed, installed from its tarball into an empty
 * prefix on PATH, guarding a copy of the demo workspace three ways —
 *
 * - `dsh-guard setup --agent gemini` in the project (`.gemini/settings.json`,
 *   a team's file: its hooks run dsh-guard-hook and dsh-guard from PATH);
 * - `gemini extensions install` of the package's `gemini/` directory;
 * - `gemini extensions install` of a directory shaped like this repository
 *   (its root's `gemini-extension.json` and `hooks/hooks.json`, the launcher
 *   at `packages/dsh-guard/hook`), as a clone of it would be installed.
 *
 * Gemini CLI copies an extension when it installs it; the copy's launcher
 * finds the dsh-guard on PATH. One session each, one file per call: a
 * `replace` that breaks the type-check (rolled back, the model given the
 * suite's text as the tool's error), a good one (kept), and a checkpoint
 * through the suite's MCP server (its claim never run marked). Then the
 * uninstall leaves every file the install touched as it was, byte for byte,
 * but two records Gemini CLI's own uninstall keeps (GEMINI_KEEPS).
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { agentCliVersions, ensureAgentCli } from '../../../scripts/agent-clis.ts'
import { MESSAGES } from 'dsh-host-hooks'
import { geminiFunctionResponses, geminiModel, isGeminiTurnRequest, pick, runGemini, runInLoopback, startModelServer, tempDir, treeChanges, writeGeminiSettings, type AgentRun, type ModelServer } from 'dsh-testkit'
import { repoManifests } from 'dsh-guard'
import { CHECKPOINT, CLAIM_MARKED } from '../../dsh-host-hooks/tests/agent-e2e.ts'
import { ADD, ADD_STRING, agentFiles, agentInstallChecks, GOOD, guardE2eSkip, hostState, installPackage, installRoute, ORIGINAL, repo, ROUNDING, typeBreak, type InstalledGuard } from './guard-e2e.ts'

const skip = await guardE2eSkip('Gemini CLI')

const replace = (from: string, to: string) => ({ name: 'replace', arguments: { file_path: 'src/money.ts', old_string: from, new_string: to, instruction: 'edit' } })

async function session(bin: string, ws: string, home: string, path: string): Promise<{ run: AgentRun; server: ModelServer }> {
  const server = await startModelServer(geminiModel([
    { text: 'Let add take strings.', toolCalls: [replace(ADD, ADD_STRING)] },
    { text: 'Note the rounding.', toolCalls: [replace(ROUNDING, GOOD)] },
    { text: 'Checkpoint.', toolCalls: [{ name: 'mcp_dsh_checkpoint', arguments: CHECKPOINT }] },
    { text: 'Done.' },
  ]))
  const run = await runGemini({ bin, workspace: ws, prompt: 'Tidy up the money module.', server, home, env: { PATH: path }, timeoutMs: 300_000 })
  return { run, server }
}

function expectGuarded(result: { run: AgentRun; server: ModelServer }, ws: string): void {
  expect(result.run.exitCode, result.run.stderr).toBe(0)
  const last = result.server.requests.filter(isGeminiTurnRequest).at(-1)!
  const [broken, good, checkpoint] = geminiFunctionResponses(last)
  expect(broken).toEqual({ name: 'replace', response: { error: typeBreak('replace') } })
  expect(good).toMatchObject({ name: 'replace', response: { output: expect.stringContaining('Successfully modified file') } })
  // The suite's MCP server, started by Gemini CLI as the install named it, answers for this project's session.
  expect(checkpoint).toMatchObject({ name: 'mcp_dsh_checkpoint', response: { output: expect.stringContaining(CLAIM_MARKED) } })
  expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toBe(ORIGINAL.replace(ROUNDING, GOOD))
  const shown = result.server.requests.map(r => JSON.stringify(r.body ?? '')).join('\n')
  expect(shown).not.toContain(MESSAGES.notVerified('').slice(0, 20))
}

/** Gemini CLI's own state, which every run of it writes (its id, the folders it ran in, the key it was given): not the install's. */
const GEMINI_STATE = /^home\/\.gemini\/(installation_id|projects\.json|gemini-credentials\.json|history\/|tmp\/)/

/** What `gemini extensions uninstall` leaves of an extension's install: Gemini CLI's records, not the extension's files. */
const GEMINI_KEEPS = ['home/.gemini/extension_integrity.json', 'home/.gemini/extensions/extension-enablement.json']

/** A directory shaped like this repository as an extension: its root's manifests and the launcher they name. */
function repoShapedExtension(): string {
  const { version, description } = JSON.parse(readFileSync(join(repo, 'packages/dsh-guard/package.json'), 'utf8')) as { version: string; description: string }
  const dir = tempDir('dsh-guard-repo-ext-')
  const files = Object.entries(repoManifests(version, description)).filter(([f]) => f !== '.claude-plugin/marketplace.json')
  for (const [file, text] of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  mkdirSync(join(dir, 'packages/dsh-guard'), { recursive: true })
  copyFileSync(join(repo, 'packages/dsh-guard/hook'), join(dir, 'packages/dsh-guard/hook'))
  return dir
}

describe.skipIf(!!skip)('dsh-guard, packed and installed, in the real Gemini CLI', () => {
  let installed: InstalledGuard
  beforeAll(() => {
    installed = installPackage()
  }, 600_000)

  for (const version of agentCliVersions('gemini')) {
    const label = version ? `Gemini CLI ${version} (current)` : 'Gemini CLI (pinned; the current release too)'

    describe(`${label}, npm install + dsh-guard setup --agent gemini`, () => {
      let setupOut = ''
      const guard = (args: string[]) => execFileSync(installed.bin, args, { cwd: r.ws, env: { ...process.env, HOME: r.home, PATH: installed.path }, encoding: 'utf8' })
      let gemini = ''
      const r = installRoute({
        homePrefix: 'dsh-guard-gemini-home-',
        prepare: async ({ home }) => {
          gemini = await ensureAgentCli('gemini', () => {}, version)
          writeGeminiSettings(home)
        },
        install: () => (setupOut = guard(['setup', '--agent', 'gemini'])),
        session: ({ ws, home }) => session(gemini, ws, home, installed.path),
      })

      it('says what it wrote, at which level, and that no path of this machine is in it', () => {
        expect(setupOut).toBe([
          'installed dsh hooks for gemini (project-level: this project only):',
          '  .gemini/settings.json: created',
          'They run dsh-guard-hook and dsh-guard from PATH: no path of this machine is in them.',
          `From the next gemini session in ${r.ws}, a write that makes the project worse is rolled back and the agent told why (one that only breaks other files is kept for now; the turn cannot end with it).`,
          'The guard of this project is starting (status says when it is up).',
          '',
        ].join('\n'))
        expect(r.touched).toEqual(['ws/.gemini/settings.json'])
        expect(r.files['ws/.gemini/settings.json']).not.toContain(r.ws)
        expect(r.files['ws/.gemini/settings.json']).not.toContain(installed.prefix)
      })

      it('rolls back the type break with the suite\'s text, keeps the good edit', () => {
        expectGuarded(r.result!, r.ws)
      })

      it('uninstall leaves every file the install touched as it was', () => {
        // The guarded session left this project's host running: uninstall stops it.
        const removed = guard(['uninstall'])
        const stopped = /^removed dsh hooks for gemini \(project-level: this project only\):\n  \.gemini\/settings\.json: restored\nstopped the guard of this project \(pid (\d+)\)\n$/.exec(removed)
        expect(stopped, removed).not.toBeNull()
        expect(hostState(Number(stopped![1]))).toMatch(/^(gone|Z|X)$/)
        expect(pick(agentFiles(r.ws, r.home), r.touched)).toEqual(pick(r.before, r.touched))
      })
    })

    for (const source of ['the package\'s gemini/ directory', 'a directory shaped like this repository'] as const) {
      describe(`${label}, gemini extensions install of ${source}`, () => {
        let gemini = ''
        // GEMINI_CLI_TRUST_WORKSPACE: the user's "yes" to trusting the extension's source folder.
        const cli = async (args: string[]) => {
          const out = await runInLoopback([gemini, ...args], { cwd: r.home, env: { HOME: r.home, PATH: installed.path, GEMINI_CLI_TRUST_WORKSPACE: 'true' }, timeoutMs: 120_000 })
          if (out.exitCode !== 0) throw new Error(`gemini ${args.join(' ')}: ${out.stderr || out.stdout}`)
          return out.stdout
        }
        let from = ''
        const r = installRoute({
          homePrefix: 'dsh-guard-gemini-home-',
          prepare: async ({ home }) => {
            gemini = await ensureAgentCli('gemini', () => {}, version)
            writeGeminiSettings(home)
            from = source.startsWith('the package') ? join(installed.pkg, 'gemini') : repoShapedExtension()
          },
          install: () => cli(['extensions', 'install', from, '--consent']),
          session: ({ ws, home }) => session(gemini, ws, home, installed.path),
          agentState: GEMINI_STATE,
        })

        agentInstallChecks(r, {
          installs: [
            'installs the extension into Gemini CLI\'s home, nothing in the project',
            'home/.gemini/extensions/dsh-guard/gemini-extension.json', 'home/.gemini/extensions/dsh-guard/hooks/hooks.json',
          ],
          guarded: ['rolls back the type break with the suite\'s text, keeps the good edit', () => expectGuarded(r.result!, r.ws)],
          uninstall: ['gemini extensions uninstall leaves every file the install touched as it was, but Gemini CLI\'s own two records',
            () => cli(['extensions', 'uninstall', 'dsh-guard'])],
          // Gemini CLI 0.61 keeps the extension's integrity record and an emptied enablement file after its uninstall.
          agentKeeps: { paths: GEMINI_KEEPS, check: after => expect(after['home/.gemini/extensions/extension-enablement.json']).toBe('{}') },
        })
      })
    }
  }
})
