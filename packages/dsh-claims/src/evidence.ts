import { formatKey, programBasename, unwrapCommand, type CommandKey } from './command-key.ts'
import { parseShell, simpleCommands } from './shell.ts'

/** The commands a verified line names, and their keys. */
export interface Evidence {
  /** Command lines as written in the claim. Empty when it names none. */
  commands: string[]
  /** Distinct keys of every simple command in them. */
  keys: CommandKey[]
}

/**
 * Programs a line may start with for it to read as a command. Lines that start
 * elsewhere count as commands only through a path (`./check.sh`), or when the
 * exact command ran in the session.
 */
const KNOWN_PROGRAMS = new Set([
  'npm', 'pnpm', 'yarn', 'bun', 'npx', 'pnpx', 'bunx', 'deno', 'node', 'tsx', 'ts-node', 'tsc', 'vitest', 'jest', 'mocha', 'ava', 'tap',
  'playwright', 'cypress', 'eslint', 'prettier', 'biome', 'oxlint', 'vite', 'webpack', 'rollup', 'esbuild', 'turbo', 'nx', 'lerna',
  'python', 'python3', 'pytest', 'py.test', 'tox', 'nox', 'uv', 'uvx', 'poetry', 'pipenv', 'pdm', 'hatch', 'pip', 'pip3', 'mypy', 'pyright', 'ruff', 'black', 'flake8', 'pylint',
  'go', 'gofmt', 'golangci-lint', 'cargo', 'rustc', 'rustfmt', 'clippy-driver', 'make', 'cmake', 'ctest', 'ninja', 'bazel', 'bazelisk', 'buck2', 'just', 'task',
  'gcc', 'g++', 'clang', 'clang++', 'javac', 'java', 'mvn', 'gradle', 'gradlew', 'sbt', 'kotlinc', 'dotnet', 'msbuild', 'swift', 'xcodebuild',
  'ruby', 'bundle', 'rake', 'rspec', 'rails', 'php', 'composer', 'phpunit', 'mix', 'elixir', 'erl', 'rebar3', 'stack', 'cabal', 'ghc', 'dune', 'zig', 'nim', 'dart', 'flutter',
  'bash', 'sh', 'zsh', 'git', 'docker', 'docker-compose', 'kubectl', 'helm', 'terraform', 'curl', 'env', 'timeout', 'time', 'cd', 'pushd',
  'grep', 'rg', 'diff', 'cmp', 'shellcheck', 'dsh',
])

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

/** Keys of every simple command in a command line (wrappers, runners and `cd` steps looked through). */
export function commandKeys(command: string, depth = 0): CommandKey[] {
  const keys: CommandKey[] = []
  for (const words of simpleCommands(parseShell(command))) {
    const what = unwrapCommand(words)
    if (!what) continue
    if ('key' in what) keys.push(what.key)
    else if (depth < 3) keys.push(...commandKeys(what.script, depth + 1))
  }
  return keys
}

/** True when some simple command of `text` starts with a known program or a path. */
function startsLikeCommand(text: string): boolean {
  return simpleCommands(parseShell(text)).some((words) => {
    const first = words.find(w => !ASSIGNMENT.test(w))
    return first !== undefined && (first.includes('/') || KNOWN_PROGRAMS.has(programBasename(first)))
  })
}

/** Trim a candidate: surrounding quotes, and sentence punctuation glued to its end (`pnpm test.`, not `eslint .`). */
function clean(text: string): string {
  const unpunct = (t: string) => t.trim().replace(/(\S)[.,;]+$/, '$1')
  let t = unpunct(text)
  const quoted = /^(["'“”‘’])(.*)(["'“”‘’])$/.exec(t)
  if (quoted) t = unpunct(quoted[2]!)
  return t
}

function backtickSpans(text: string): string[] {
  return [...text.matchAll(/`{1,3}([^`]+)`{1,3}/g)].map(m => m[1]!.trim()).filter(Boolean)
}

/**
 * The evidence a verified line names, looked for in this order: the text
 * after the last em (or en) dash, after the first ` -- `, inside backticks,
 * inside trailing parentheses, after the last `: `, then the whole line.
 * A place counts when it reads as a command (see `KNOWN_PROGRAMS`) or when
 * `ran(key)` says one of its commands ran. Failing all that, the text after
 * a dash is taken as the command anyway: that is the agreed format.
 * @example evidenceOf('login rejects expired tokens — pnpm vitest run tests/auth.test.ts').commands // ['pnpm vitest run tests/auth.test.ts']
 */
export function evidenceOf(line: string, ran: (key: CommandKey) => boolean = () => false): Evidence {
  const text = line.trim()
  const dash = /\s*[—–]\s*/g
  let afterDash: string | undefined
  for (let m = dash.exec(text); m; m = dash.exec(text)) afterDash = text.slice(m.index + m[0].length)
  const dd = text.indexOf(' -- ')
  const afterDoubleDash = dd === -1 ? undefined : text.slice(dd + 4)
  const paren = /\(([^()]+)\)\s*\.?$/.exec(text)
  const colon = text.lastIndexOf(': ')

  const places: (string[] | undefined)[] = [
    afterDash === undefined ? undefined : spansOr(afterDash),
    afterDoubleDash === undefined ? undefined : spansOr(afterDoubleDash),
    backtickSpans(text),
    paren ? spansOr(paren[1]!) : undefined,
    colon === -1 ? undefined : spansOr(text.slice(colon + 2)),
    [text],
  ]
  for (const place of places) {
    if (!place?.length) continue
    const commands = place.map(clean).filter(c => c && (startsLikeCommand(c) || commandKeys(c).some(ran)))
    if (commands.length) return withKeys(commands)
  }
  for (const loose of [afterDash, afterDoubleDash]) {
    if (loose === undefined) continue
    const commands = spansOr(loose).map(clean).filter(c => c && commandKeys(c).length)
    if (commands.length) return withKeys(commands)
  }
  return { commands: [], keys: [] }
}

function spansOr(text: string): string[] {
  const spans = backtickSpans(text)
  return spans.length ? spans : [text]
}

function withKeys(commands: string[]): Evidence {
  const seen = new Map<string, CommandKey>()
  for (const c of commands) for (const k of commandKeys(c)) seen.set(formatKey(k), k)
  return { commands, keys: [...seen.values()] }
}
