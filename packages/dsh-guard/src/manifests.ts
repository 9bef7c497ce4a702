/**
 * The manifests each agent reads from the built package (read from the
 * pinned CLIs' own code; see ../README.md):
 *
 * - Claude Code plugin, at the package root: `.claude-plugin/plugin.json`
 *   (the MCP server inline) and `hooks/hooks.json`, every path through
 *   `${CLAUDE_PLUGIN_ROOT}`, the project through `$CLAUDE_PROJECT_DIR`.
 * - Gemini CLI extension, `gemini/`: `gemini-extension.json` (`mcpServers`)
 *   and `hooks/hooks.json`, through `${extensionPath}`.
 * - Codex plugin, `codex/`: `.codex-plugin/plugin.json`, `hooks/hooks.json`,
 *   `.mcp.json`.
 *
 * Gemini CLI and Codex copy an extension or plugin directory when they
 * install it, so theirs carry a small launcher (`hook`) that finds the
 * package: the one around it, else the `dsh-guard` on PATH.
 */
import { ADAPTERS, hookCommand, type HookAdapter } from 'dsh-host-hooks'

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

/**
 * The launcher of a copied extension: `hook ARGS…` runs the hook client with
 * ARGS, `hook mcp ARGS…` the MCP server; without a package to run, a hook
 * passes (exit 0) and says why on stderr.
 */
const LAUNCHER = `#!/bin/sh
# The dsh-guard package: the one around this directory, else the dsh-guard on PATH.
pkg=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$pkg/cli.mjs" ]; then
  bin=$(command -v dsh-guard) && pkg=$(dirname "$(readlink -f "$bin")")
fi
if [ ! -f "$pkg/cli.mjs" ]; then
  echo "dsh-guard is not installed (npm i -g dsh-guard): this call is not verified" >&2
  exit 0
fi
if [ "$1" = mcp ]; then
  shift
  exec "\${DSH_NODE:-node}" "$pkg/cli.mjs" hooks mcp "$@"
fi
exec sh "$pkg/${CLIENT}" "$@"
`

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
    'codex/.codex-plugin/plugin.json': json({ ...info, hooks: './hooks/hooks.json', mcpServers: './.mcp.json' }),
    'codex/.mcp.json': json({ mcpServers: { dsh: { command: 'sh', args: ['./hook', 'mcp'], cwd: '${PLUGIN_ROOT}' } } }),
    'codex/hooks/hooks.json': hooksFile(codex, '${PLUGIN_ROOT}/hook', 1),
    'codex/hook': LAUNCHER,
  }
}
