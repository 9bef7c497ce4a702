/**
 * The pinned third-party agent CLIs the hooks host's end-to-end tests drive:
 * each installed from npm into a cache directory keyed by its pin (a second
 * run costs nothing), on the Node that runs this script (both need ≥ 20).
 * Codex ships its native binary as an optional dependency of the npm package,
 * so optional dependencies are installed; no install script runs.
 *
 *   tsx scripts/agent-clis.ts install [agent…]   install (or find) the pinned CLIs and the current releases; prints their paths
 *
 * `.ci/run` calls `install` before the tests; a test calls `ensureAgentCli(agent)`,
 * which finds the cache or installs it itself. These CLIs reach for other
 * hosts (telemetry, updates, model lists): run them only inside a
 * loopback-only network namespace (dsh-testkit's `runInLoopback`).
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { isMain } from './lib/cli.ts'

const run = promisify(execFile)

/**
 * npm package, pinned version, and the bin it provides; `native`: the
 * executable is the platform package's binary (what the package's
 * postinstall, which does not run here, would copy over its bin).
 */
export const AGENT_CLI_PINS = {
  claude: { package: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude', native: true },
  codex: { package: '@openai/codex', version: '0.171.0', bin: 'codex' },
  gemini: { package: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
} as const

export type AgentCliName = keyof typeof AGENT_CLI_PINS

/**
 * Each agent's current npm release when last checked (`npm view <package>
 * version`), verified next to its pin; the same as the pin where they are equal.
 */
export const AGENT_CLI_CURRENT: Record<AgentCliName, string> = { claude: '2.1.337', codex: '0.171.0', gemini: '0.61.0' }

/** The releases an e2e run covers for `agent`: the pin (undefined), and the current release when it is another. */
export function agentCliVersions(agent: AgentCliName): (string | undefined)[] {
  return AGENT_CLI_CURRENT[agent] === AGENT_CLI_PINS[agent].version ? [undefined] : [undefined, AGENT_CLI_CURRENT[agent]]
}

/** The pin of `agent`, at `version` when given (an agent's current release, next to its pin). */
function pinOf(agent: AgentCliName, version?: string) {
  return version ? { ...AGENT_CLI_PINS[agent], version } : AGENT_CLI_PINS[agent]
}

export function agentCliCacheDir(agent: AgentCliName, version?: string): string {
  const pin = pinOf(agent, version)
  const key = createHash('sha256').update(JSON.stringify(pin)).digest('hex').slice(0, 12)
  return join(process.env.DSH_AGENT_CLI_CACHE ?? join(homedir(), '.cache', 'dsh-agent-clis'), `${agent}-${pin.version}-${key}`)
}

function binPath(agent: AgentCliName, dir: string): string {
  const pin = AGENT_CLI_PINS[agent]
  if ('native' in pin) return join(dir, 'node_modules', `${pin.package}-${process.platform}-${process.arch}`, pin.bin)
  return join(dir, 'node_modules', '.bin', pin.bin)
}

/** The cached pinned CLI's executable (or, with `version`, that release's), installing it first when absent. */
export async function ensureAgentCli(agent: AgentCliName, log: (line: string) => void = () => {}, version?: string): Promise<string> {
  const dir = agentCliCacheDir(agent, version)
  if (existsSync(join(dir, '.complete'))) return binPath(agent, dir)
  const pin = pinOf(agent, version)
  const work = `${dir}.install-${process.pid}`
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  log(`installing ${pin.package}@${pin.version} into ${dir}`)
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: `dsh-pinned-${agent}`, private: true, dependencies: { [pin.package]: pin.version } }, null, 2))
  await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: work, timeout: 600_000 })
  if (!existsSync(binPath(agent, work))) throw new Error(`${pin.package}@${pin.version} installed without its ${pin.bin} bin (${work})`)
  writeFileSync(join(work, '.complete'), new Date().toISOString() + '\n')
  rmSync(dir, { recursive: true, force: true })
  renameSync(work, dir)
  return binPath(agent, dir)
}

if (isMain(import.meta.url)) {
  const [command, ...names] = process.argv.slice(2)
  const known = Object.keys(AGENT_CLI_PINS) as AgentCliName[]
  const unknown = names.filter(n => !known.includes(n as AgentCliName))
  if (command !== 'install' || unknown.length) {
    process.stderr.write(`usage: tsx scripts/agent-clis.ts install [${known.join('|')}]…${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}\n`)
    process.exitCode = 2
  } else {
    for (const agent of names.length ? (names as AgentCliName[]) : known) {
      for (const version of agentCliVersions(agent)) {
        const bin = await ensureAgentCli(agent, line => process.stdout.write(line + '\n'), version)
        process.stdout.write(`${agent}${version ? ` ${version} (current)` : ''}: ${bin}\n`)
      }
    }
  }
}
