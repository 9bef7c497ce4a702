import { join } from 'node:path'

/**
 * Where the host keeps its state, all under `<vault>/hooks/` (owner-only):
 * the socket hook calls reach it on, its lock (which holds its pid, so the
 * hook client can tell "starting" from "absent"), its log, the
 * per-session markers an earlier client kept of a fail-open note given
 * (removed at start: the note is given each time now), the record of
 * what `dsh hooks install` wrote, and the workspace's host settings.
 */
export const hookPaths = (vault: string) => {
  const dir = join(vault, 'hooks')
  return {
    dir,
    socket: join(dir, 'host.sock'),
    lock: join(dir, 'host.lock'),
    log: join(dir, 'host.log'),
    noted: join(dir, 'noted'),
    installed: (agent: string) => join(dir, `installed-${agent}.json`),
    settings: join(dir, 'settings.json'),
  }
}

/** The longest unix socket path Linux accepts (`sun_path` is 108 bytes with its terminating NUL). */
export const MAX_SOCKET_PATH = 107
