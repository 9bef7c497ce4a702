/**
 * Command keys: how a run and a claim name "the same command". A key is the
 * program's basename plus its first argument (`vitest run`, `tsc --noEmit`,
 * `go test`), after the wrappers a shell user looks through are removed.
 * The rules (and their limits) are listed in the package README.
 */

/** A keyed simple command. `arg` is absent when the program ran with no arguments. */
export interface CommandKey {
  program: string
  arg?: string
}

/** `program` or `program arg`. */
export function formatKey(key: CommandKey): string {
  return key.arg === undefined ? key.program : `${key.program} ${key.arg}`
}

/** Steps that change the shell's state but run nothing worth claiming. */
const DROPPED = new Set([
  'cd', 'pushd', 'popd', 'export', 'unset', 'set', 'shopt', 'source', '.', 'alias', 'trap', 'umask', 'wait',
  'true', 'false', ':', 'echo', 'printf', 'test', '[', 'exit', 'return', 'read', 'sleep',
])

/** Wrappers whose own options are skipped; the value-taking ones list their options. */
const WRAPPERS: Record<string, { valued: Set<string>; positional?: number }> = {
  env: { valued: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']) },
  'cross-env': { valued: new Set() },
  time: { valued: new Set(['-f', '--format', '-o', '--output']) },
  command: { valued: new Set() },
  builtin: { valued: new Set() },
  exec: { valued: new Set(['-a']) },
  nohup: { valued: new Set() },
  nice: { valued: new Set(['-n', '--adjustment']) },
  timeout: { valued: new Set(['-s', '--signal', '-k', '--kill-after']), positional: 1 },
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh'])

/** Package runners that execute the binary named next. */
const DIRECT_RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'uvx'])
const RUNNER_VALUED = new Set(['-p', '--package', '-c', '--call', '--from', '--with', '--python'])

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun'])
/** Options of package managers that take a value. */
const PM_VALUED: Record<string, Set<string>> = {
  npm: new Set(['-w', '--workspace', '--prefix', '--loglevel', '-C']),
  pnpm: new Set(['--filter', '-F', '-C', '--dir', '--loglevel', '--reporter', '--filter-prod', '--test-pattern', '--changed-files-ignore-pattern']),
  yarn: new Set(['--cwd', '--mutex', '--network-timeout', '--modules-folder', '--cache-folder']),
  bun: new Set(['--cwd', '-c', '--config', '--filter', '-F']),
}
/** `<pm> <sub> X`: run the binary X. */
const PM_EXEC: Record<string, Set<string>> = {
  npm: new Set(['exec', 'x']),
  pnpm: new Set(['exec', 'dlx']),
  yarn: new Set(['exec', 'dlx']),
  bun: new Set(['x']),
}
/** `<pm> run X`: run the package script X. */
const PM_RUN = new Set(['run', 'run-script', 'rum', 'urn'])
/** `<pm> test` and friends: shortcuts for `<pm> run <script>` (not for bun, whose `test` is its own runner). */
const PM_SCRIPT_SHORTCUTS: Record<string, string> = { test: 'test', t: 'test', tst: 'test', start: 'start', stop: 'stop', restart: 'restart' }
/** A package manager's own commands; pnpm, yarn and bun treat any other first word as a script or binary to run. */
const PM_BUILTINS: Record<string, Set<string>> = {
  pnpm: new Set(['add', 'install', 'i', 'update', 'up', 'upgrade', 'remove', 'rm', 'uninstall', 'un', 'link', 'ln', 'unlink', 'import', 'rebuild', 'rb', 'prune', 'fetch', 'install-test', 'it', 'patch', 'patch-commit', 'patch-remove', 'audit', 'list', 'ls', 'outdated', 'why', 'licenses', 'create', 'init', 'publish', 'pack', 'recursive', 'server', 'store', 'root', 'bin', 'setup', 'env', 'config', 'c', 'deploy', 'doctor', 'self-update', 'cat-file', 'cat-index', 'find-hash', 'help', 'approve-builds', 'ignored-builds', 'dedupe', 'exec', 'dlx', 'run', 'test', 'start']),
  yarn: new Set(['add', 'install', 'remove', 'upgrade', 'up', 'init', 'info', 'why', 'workspaces', 'workspace', 'cache', 'config', 'global', 'link', 'unlink', 'pack', 'publish', 'login', 'logout', 'list', 'outdated', 'audit', 'bin', 'dedupe', 'set', 'plugin', 'npm', 'constraints', 'dlx', 'exec', 'node', 'run', 'test', 'start', 'version', 'import', 'help', 'autoclean', 'check', 'generate-lock-entry', 'licenses', 'owner', 'policies', 'tag', 'team', 'upgrade-interactive']),
  bun: new Set(['run', 'test', 'x', 'repl', 'exec', 'install', 'i', 'add', 'a', 'remove', 'rm', 'update', 'outdated', 'link', 'unlink', 'publish', 'patch', 'pm', 'build', 'init', 'create', 'upgrade', 'audit', 'info', 'why', 'help']),
}
/** `<tool> run X` style runners of other ecosystems. */
const SUB_RUNNERS: Record<string, Set<string>> = {
  uv: new Set(['run']),
  poetry: new Set(['run']),
  pipenv: new Set(['run']),
  pdm: new Set(['run']),
  hatch: new Set(['run']),
  bundle: new Set(['exec']),
}
const PYTHONS = /^python(\d+(\.\d+)?)?$/
const MAX_ARG = 120

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

export function programBasename(word: string): string {
  const trimmed = word.replace(/\/+$/, '')
  const slash = trimmed.lastIndexOf('/')
  return slash === -1 ? trimmed : trimmed.slice(slash + 1)
}

/** Skip options (and the values of `valued` ones) from `i`; stops at `--` (consumed) or the first non-option. */
function skipOptions(words: readonly string[], i: number, valued: Set<string>): number {
  while (i < words.length) {
    const w = words[i]!
    if (w === '--') return i + 1
    if (!w.startsWith('-') || w === '-') return i
    i += valued.has(w) ? 2 : 1
  }
  return i
}

/** What a simple command runs: a key, an inline script to read (`bash -c '…'`), or nothing worth keying. */
export type Unwrapped = { key: CommandKey } | { script: string } | undefined

/**
 * Look through assignments, wrappers and package runners to the command a
 * shell user would name, and key it.
 * @example unwrapCommand(['FOO=1', 'pnpm', 'exec', 'vitest', 'run', 'a.test.ts']) // { key: { program: 'vitest', arg: 'run' } }
 */
export function unwrapCommand(input: readonly string[]): Unwrapped {
  let words = input
  for (let guard = 0; guard < 16; guard++) {
    let i = 0
    while (i < words.length && ASSIGNMENT.test(words[i]!)) i++
    words = words.slice(i)
    if (!words.length) return undefined
    const program = programBasename(words[0]!)
    const wrapper = WRAPPERS[program]
    if (wrapper) {
      let j = skipOptions(words, 1, wrapper.valued)
      if (program === 'env' || program === 'cross-env') while (j < words.length && ASSIGNMENT.test(words[j]!)) j++
      j += wrapper.positional ?? 0
      words = words.slice(j)
      continue
    }
    if (DROPPED.has(program)) return undefined
    if (SHELLS.has(program)) {
      const flag = words.findIndex((w, k) => k > 0 && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w))
      if (flag !== -1 && words[flag + 1] !== undefined) return { script: words[flag + 1]! }
    }
    if (DIRECT_RUNNERS.has(program)) {
      words = words.slice(skipOptions(words, 1, RUNNER_VALUED))
      continue
    }
    if (PYTHONS.test(program) && words[1] === '-m' && words[2]) {
      words = words.slice(2)
      continue
    }
    if (SUB_RUNNERS[program]?.has(words[1] ?? '')) {
      words = words.slice(skipOptions(words, 2, RUNNER_VALUED))
      continue
    }
    if (program === 'node' && words[1] && /(^|\/)node_modules\//.test(words[1])) {
      words = [programBasename(words[1]).replace(/\.(c|m)?js$/, ''), ...words.slice(2)]
      continue
    }
    if (PACKAGE_MANAGERS.has(program)) {
      const at = skipOptions(words, 1, PM_VALUED[program]!)
      const sub = words[at]
      if (sub === undefined) return { key: { program } }
      const rest = words.slice(at + 1)
      if (PM_EXEC[program]!.has(sub)) {
        words = rest.slice(skipOptions(rest, 0, RUNNER_VALUED))
        continue
      }
      if (PM_RUN.has(sub)) {
        const s = skipOptions(rest, 0, PM_VALUED[program]!)
        if (s >= rest.length) return { key: { program, arg: sub } }
        return { key: scriptKey(rest.slice(s)) }
      }
      const shortcut = program === 'bun' ? undefined : PM_SCRIPT_SHORTCUTS[sub]
      if (shortcut) return { key: scriptKey([shortcut, ...rest]) }
      if (program !== 'npm' && !PM_BUILTINS[program]!.has(sub)) return { key: scriptKey(words.slice(at)) }
      return { key: { program, arg: sub } }
    }
    return { key: plainKey(program, words[1]) }
  }
  return undefined
}

function plainKey(program: string, arg: string | undefined): CommandKey {
  return arg === undefined ? { program } : { program, arg: arg.length > MAX_ARG ? arg.slice(0, MAX_ARG) : arg }
}

/**
 * A script (or binary) run by a package manager is keyed like a program
 * named after it, so `pnpm test`, `npm run test` and `yarn test` are one
 * command, and `pnpm vitest run` is `vitest run`. A leading `--` (the
 * manager's argument separator) is not the first argument.
 */
function scriptKey(words: readonly string[]): CommandKey {
  return plainKey(programBasename(words[0]!), words[1] === '--' ? words[2] : words[1])
}
