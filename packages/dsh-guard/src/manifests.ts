/**
 * The manifests each agent reads from the built package (read from the
 * pinned CLIs' own code; see ../README.md):
 *
 * - Claude Code plugin, at the package root: `.claude-plugin/plugin.json`
 *   (the MCP server inline) and `hooks/hooks.json`, every path through
 *   `${CLAUDE_PLUGIN_ROOT}`, the project through `$CLAUDE_PROJECT_DIR`.
 * - Gemini CLI extension, `gemini/`: `gemini-extension.json` (`mcpServers`)
 *   and `hooks/hooks.json`, through `${extensionPath}`.
 * - Codex plugin, at the package root too: `.codex-plugin/plugin.json`
 *   naming `codex/hooks.json` and `codex/mcp.json`.
 *
 * Gemini CLI copies an extension directory when it installs it, so its hooks
 * run a small launcher (`hook`) that finds the package: the one around it,
 * else the `dsh-guard` on PATH (Codex's too, whose hook commands are not
 * verified here yet).
 */
import { readFileSync } from 'node:fs'
import { ADAPTERS, hookCommand, type HookAdapter } from 'dsh-host-hooks'

/** The launcher of a copied extension or plugin directory (`hook`, beside this package's package.json). */
const LAUNCHER = readFileSync(new URL('../hook', import.meta.url), 'utf8')

const CLIENT = 'assets/packages/dsh-host-hooks/bin/dsh-hook'

const adapter = (agent: string): HookAdapter => ADAPTERS.find(a => a.agent === agent)!

/** An agent's hooks file: its hook entries, each running `client` (a path with the agent's variable). */
function hooksFile(a: HookAdapter, client: string, timeoutScale: number, projectWord = a.projectWord): string {
  const hooks: Record<string, unknown[]> = {}
  for (const entry of a.hooks) {
    const command = hookCommand({ projectWord }, a.agent, entry, client)
    hooks[entry.event] = [{ ...(entry.matcher ? { matcher: entry.matcher } : {}), hooks: [{ type: 'command', command, timeout: entry.timeoutSeconds * timeoutScale }] }]
  }
  return json({ description: 'dsh-guard: every write snapshotted, checked, and rolled back when it makes the project worse', hooks })
}

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n'

/** Every manifest file of the package, by its path in the package. */
export function agentManifests(version: string, description: string): Record<string, string> {
  const claude = adapter('claude-code')
  const gemini = adapter('gemini')
  const codex = adapter('codex')
  const info = { name: 'dsh-guard', version, description }
  return {
    '.claude-plugin/plugin.json': json({
      ...info,
      homepage: 'https://www.npmjs.com/package/dsh-guard',
      mcpServers: { dsh: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/cli.mjs', 'hooks', 'mcp', '--workspace', '${CLAUDE_PROJECT_DIR}'] } },
    }),
    'hooks/hooks.json': hooksFile(claude, `\${CLAUDE_PLUGIN_ROOT}/${CLIENT}`, 1),
    'gemini/gemini-extension.json': json({
      ...info,
      mcpServers: { dsh: { command: 'sh', args: ['${extensionPath}${/}hook', 'mcp', '--workspace', '${workspacePath}'] } },
    }),
    // Gemini CLI fills in `${extensionPath}` and `${workspacePath}` when it loads the file.
    'gemini/hooks/hooks.json': hooksFile(gemini, '${extensionPath}/hook', 1000, '"${workspacePath}"'),
    'gemini/hook': LAUNCHER,
    // Codex reads `.codex-plugin/plugin.json` before `.claude-plugin/plugin.json`; its hooks and MCP server in files of their own.
    '.codex-plugin/plugin.json': json({ ...info, hooks: './codex/hooks.json', mcpServers: './codex/mcp.json' }),
    'codex/mcp.json': json({ mcpServers: { dsh: { command: 'sh', args: ['./hook', 'mcp'], cwd: '${PLUGIN_ROOT}' } } }),
    'codex/hooks.json': hooksFile(codex, '${PLUGIN_ROOT}/hook', 1),
    'hook': LAUNCHER,
  }
}

/**
 * The files at the root of this repository that make it a Claude Code (and
 * Codex) plugin marketplace listing the npm package, and a Gemini CLI
 * extension whose launcher runs the dsh-guard on PATH.
 */
export function repoManifests(version: string, description: string): Record<string, string> {
  const gemini = adapter('gemini')
  return {
    '.claude-plugin/marketplace.json': json({
      name: 'dsh',
      owner: { name: 'dsh verification suite' },
      plugins: [{ name: 'dsh-guard', description, version, source: { source: 'npm', package: 'dsh-guard' } }],
    }),
    'gemini-extension.json': json({
      name: 'dsh-guard', version, description,
      mcpServers: { dsh: { command: 'sh', args: ['${extensionPath}${/}packages${/}dsh-guard${/}hook', 'mcp', '--workspace', '${workspacePath}'] } },
    }),
    'hooks/hooks.json': hooksFile(gemini, '${extensionPath}/packages/dsh-guard/hook', 1000, '"${workspacePath}"'),
  }
}
