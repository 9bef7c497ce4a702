import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, openSync, closeSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { hookPaths } from './paths.ts'

/** The `dsh` command's launcher: the hook client and the MCP server start the host through it. */
export const DSH_LAUNCHER = fileURLToPath(new URL('../../dsh-cli/bin/dsh.mjs', import.meta.url))

/**
 * Start the workspace's host in the background (`dsh hooks serve`), detached
 * from the caller, its output appended to `<vault>/hooks/host.log`. A second
 * start while one runs exits at once (the host's lock).
 */
export function startHost(workspace: string, vault: string, node = process.execPath): void {
  const paths = hookPaths(vault)
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  chmodSync(paths.dir, 0o700)
  const log = openSync(paths.log, 'a', 0o600)
  try {
    // Two malloc arenas, as the hook client starts it (see bin/dsh-hook).
    spawn(node, [DSH_LAUNCHER, 'hooks', 'serve', '--workspace', workspace], { cwd: workspace, detached: true, stdio: ['ignore', log, log],
      env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' } }).unref()
  } finally {
    closeSync(log)
  }
}
