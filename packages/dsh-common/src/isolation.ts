import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * What a command run in isolation must not change or see: directories
 * mounted read-only (the vault) and directories hidden under an empty,
 * unreadable tmpfs (dsh's key store).
 */
export interface Isolation {
  readOnly?: readonly string[]
  hidden?: readonly string[]
  /**
   * Files shown to the command in place of others: each `source` (a file
   * outside the workspace) bind-mounted over its `target` (an existing
   * file), in the command's mount namespace only — no other process sees
   * it. Only with namespaces: the fallback cannot serve a file's content.
   */
  overlays?: readonly { source: string; target: string }[]
}

/** Whether commands can run in fresh namespaces here, and if not, why. */
export type IsolationSupport = { mode: 'namespaces' } | { mode: 'none'; reason: string }

/**
 * Runs as PID 1 of the new PID namespace, as root of a user namespace of
 * its own (so `mount` works without privileges): bind-mounts each overlay's
 * source over its target, mounts each read-only
 * path over itself read-only and an empty tmpfs over each hidden path,
 * then starts the command in a second user+mount namespace mapped back to
 * the caller's uid and gid. Mounts inherited into a less privileged
 * namespace are locked: the command cannot unmount them, nor remount the
 * vault read-write, even as "root" of its own namespace. The script stays
 * PID 1 — the kernel ignores signals PID 1 has no handler for, so the
 * command must not be it — passes SIGTERM/SIGINT/SIGHUP on, and exits
 * with the command's status (128 + n when a signal ended it), which takes
 * the namespace and everything left in it down.
 */
const SETUP = [
  'set -e',
  'u=$1; g=$2; shift 2',
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do mount --bind "$1" "$2"; shift 2; n=$((n-1)); done',
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do mount --bind -o ro "$1" "$1"; shift; n=$((n-1)); done',
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do mount -t tmpfs -o size=4k,mode=0 dsh-hidden "$1"; shift; n=$((n-1)); done',
  'set +e',
  'unshare --user --mount --map-user="$u" --map-group="$g" -- "$@" &',
  'c=$!',
  'for s in TERM INT HUP; do trap "kill -$s $c 2>/dev/null" $s; done',
  'while :; do wait $c 2>/dev/null; s=$?; kill -0 $c 2>/dev/null || exit $s; done',
].join('\n')

/**
 * `argv` wrapped to run in fresh user, PID and mount namespaces
 * (`unshare --fork --kill-child --mount-proc`): `/proc` shows only the
 * command's own processes (not the harness's, nor their environments),
 * every process it starts — `setsid`, double-forked, daemonised — dies
 * with it (PID 1 of a namespace takes the namespace down), and
 * `isolation`'s paths are read-only or hidden. Started through
 * `setpriv --pdeathsig KILL` where util-linux has it: `unshare` is then
 * killed when the process that started it dies, even by SIGKILL (no exit
 * handler runs then), and `--kill-child` takes the namespace with it.
 */
export function isolatedArgv(argv: readonly string[], isolation: Isolation = {}): string[] {
  const readOnly = isolation.readOnly ?? []
  const hidden = isolation.hidden ?? []
  const overlays = isolation.overlays ?? []
  const uid = process.getuid?.() ?? 0
  const gid = process.getgid?.() ?? 0
  return [
    ...(hasSetpriv() ? ['setpriv', '--pdeathsig', 'KILL'] : []),
    'unshare', '--map-root-user', '--pid', '--mount', '--fork', '--kill-child', '--mount-proc', '--',
    '/bin/sh', '-c', SETUP, 'dsh-isolate', String(uid), String(gid),
    String(overlays.length), ...overlays.flatMap(o => [o.source, o.target]),
    String(readOnly.length), ...readOnly, String(hidden.length), ...hidden,
    ...argv,
  ]
}

/**
 * The signal that ended an isolated command, from the status its
 * namespace's init exits with (128 + n, as a shell reports it); undefined
 * for an ordinary exit status.
 */
export function signalOfIsolatedStatus(status: number | null | undefined): string | undefined {
  if (status === null || status === undefined || status <= 128 || status > 128 + 64) return undefined
  return Object.entries(constants.signals).find(([, v]) => v === status - 128)?.[0] ?? `signal ${status - 128}`
}

const SETPRIV = Symbol.for('dsh-common/setpriv')
const found = globalThis as { [SETPRIV]?: boolean }

/** Whether `setpriv` (util-linux) runs here; asked once per process. */
function hasSetpriv(): boolean {
  found[SETPRIV] ??= spawnSync('setpriv', ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0
  return found[SETPRIV]
}

const KEY = Symbol.for('dsh-common/isolation-support')
const holder = globalThis as { [KEY]?: IsolationSupport }

/**
 * Probe once per process whether isolated commands work here (Linux,
 * `unshare` from util-linux, unprivileged user namespaces allowed, mounts
 * permitted inside them): a real isolated `true` with a read-only and a
 * hidden directory. `DSH_ISOLATION=off` forces `none`.
 */
export function isolationSupport(): IsolationSupport {
  if (process.env.DSH_ISOLATION === 'off') return { mode: 'none', reason: 'DSH_ISOLATION=off' }
  const known = holder[KEY]
  if (known) return known
  let support: IsolationSupport
  if (process.platform !== 'linux') {
    support = { mode: 'none', reason: `namespaces are Linux-only (this is ${process.platform})` }
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-isolation-'))
    try {
      mkdirSync(join(dir, 'ro'))
      mkdirSync(join(dir, 'hidden'))
      writeFileSync(join(dir, 'ro', 'f'), '')
      writeFileSync(join(dir, 'hidden', 'k'), '')
      const check = `! echo x >> "${dir}/ro/f" 2>/dev/null && test -f "${dir}/ro/f" && ! test -e "${dir}/hidden/k"`
      const [file, ...args] = isolatedArgv(['/bin/sh', '-c', check], { readOnly: [join(dir, 'ro')], hidden: [join(dir, 'hidden')] })
      const r = spawnSync(file!, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] })
      if (r.error) support = { mode: 'none', reason: `unshare cannot run (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})` }
      else if (r.status === 0) support = { mode: 'namespaces' }
      else support = { mode: 'none', reason: `unshare failed: ${(r.stderr.trim().split('\n')[0] ?? '') || `exit ${r.status ?? r.signal}`}` }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  holder[KEY] = support
  return support
}

/** The environment variable that marks every process of one isolated run when namespaces are not available. */
export const RUN_MARKER = 'DSH_RUN_ID'

/**
 * The fallback without namespaces: SIGKILL every process (this user's,
 * Linux `/proc`) whose environment carries `DSH_RUN_ID=<marker>` — which
 * every process a run started inherits, also after `setsid` or a double
 * fork, unless it cleared its environment. Returns how many were killed.
 */
export function killMarkedProcesses(marker: string): number {
  const needle = `\0${RUN_MARKER}=${marker}\0`
  let killed = 0
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // No procfs (not Linux): nothing can be found this way.
    return 0
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (!`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(needle)) continue
      process.kill(Number(entry), 'SIGKILL')
      killed++
    } catch {
      // Not ours to read (EACCES), or it ended while we looked (ENOENT, ESRCH).
    }
  }
  return killed
}
