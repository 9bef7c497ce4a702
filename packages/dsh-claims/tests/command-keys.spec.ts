import { describe, expect, it } from 'vitest'
import { commandKeys, formatKey, parseShell, unwrapCommand } from 'dsh-claims'

const keys = (command: string) => commandKeys(command).map(formatKey)

describe('command keys: program basename + first argument', () => {
  it.each<[string, string[]]>([
    // A plain command: its basename and first argument.
    ['vitest run tests/auth.test.ts', ['vitest run']],
    ['./node_modules/.bin/tsc --noEmit -p tsconfig.json', ['tsc --noEmit']],
    ['go test ./...', ['go test']],
    ['pytest', ['pytest']],
    // cd/pushd steps and leading VAR=value assignments are dropped.
    ['cd packages/auth && pnpm vitest run', ['vitest run']],
    ['pushd web; CI=1 NODE_OPTIONS="--max-old-space-size=4096" vitest run; popd', ['vitest run']],
    ['env -u HOME FOO=1 cargo test', ['cargo test']],
    // Package runners are unwrapped: npx, pnpm exec, pnpm dlx, yarn, bunx (and friends).
    ['npx vitest run a.test.ts', ['vitest run']],
    ['npx --yes vitest run', ['vitest run']],
    ['pnpm exec vitest run', ['vitest run']],
    ['pnpm dlx vitest run', ['vitest run']],
    ['pnpm --filter web exec vitest run', ['vitest run']],
    ['yarn vitest run', ['vitest run']],
    ['yarn exec vitest run', ['vitest run']],
    ['bunx vitest run', ['vitest run']],
    ['npm exec -- vitest run', ['vitest run']],
    ['pnpm vitest run tests/auth.test.ts', ['vitest run']],
    // Package scripts are keyed by script name, whichever manager runs them.
    ['pnpm test', ['test']],
    ['npm test', ['test']],
    ['npm run test', ['test']],
    ['pnpm run test', ['test']],
    ['yarn test', ['test']],
    ['yarn run test', ['test']],
    ['npm t', ['test']],
    ['pnpm test -- --run', ['test --run']],
    ['npm run build -- --watch', ['build --watch']],
    // bun's own test runner is not a script; a manager's own commands keep the manager.
    ['bun test', ['bun test']],
    ['pnpm install --frozen-lockfile', ['pnpm install']],
    ['npm ci', ['npm ci']],
    // Wrappers, python -m, uv/poetry run and node_modules entry points are looked through.
    ['timeout 60 cargo test --lib', ['cargo test']],
    ['time nice -n 5 make check', ['make check']],
    ['python3 -m pytest -q tests/', ['pytest -q']],
    ['uv run pytest tests/', ['pytest tests/']],
    ['node node_modules/typescript/bin/tsc --noEmit', ['tsc --noEmit']],
    // Compound commands split on &&, ||, ;, |, & and newlines.
    ['pnpm build && pnpm test || cat log.txt; make lint | tee out & go vet\ncargo fmt', ['build', 'test', 'cat log.txt', 'make lint', 'tee out', 'go vet', 'cargo fmt']],
    // bash -c / sh -c scripts are read.
    ["bash -lc 'cd web && npx vitest run'", ['vitest run']],
    ['sh -c "make test"', ['make test']],
    // Redirections, quotes, comments and here-document bodies are ignored.
    ['pnpm vitest run 2>&1 > out.log < /dev/null', ['vitest run']],
    ['vitest "run" # vitest watch', ['vitest run']],
    ["cat > notes.md <<'EOF'\nmake deploy\nrm -rf /\nEOF\ngo test ./...", ['cat', 'go test']],
    ['echo "a && b; c" && make', ['make']],
    // Groups are flattened and control-flow keywords dropped.
    ['(cd web && npm test) && { make; }', ['test', 'make']],
    ['for f in a b; do go test $f; done', ['go test']],
    // Steps that run nothing worth claiming have no key.
    ['cd web', []],
    ['export CI=1', []],
    ['FOO=1', []],
    ['echo done', []],
    ['true', []],
    ['test -f x', []],
    ['[ -f x ]', []],
    ['sleep 1', []],
  ])('%j → %j', (command, expected) => {
    expect(keys(command)).toEqual(expected)
  })

  it('marks a line with control flow', () => {
    expect(parseShell('if make; then echo ok; fi').control).toBe(true)
  })

  it('has no command in an empty word list', () => {
    expect(unwrapCommand([])).toBeUndefined()
  })
})
