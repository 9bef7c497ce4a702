import { describe, expect, it } from 'vitest'
import { commandKeys, formatKey, parseShell, unwrapCommand } from 'dsh-claims'

const keys = (command: string) => commandKeys(command).map(formatKey)

describe('command keys: program basename + first argument', () => {
  it('keys a plain command by its basename and first argument', () => {
    expect(keys('vitest run tests/auth.test.ts')).toEqual(['vitest run'])
    expect(keys('./node_modules/.bin/tsc --noEmit -p tsconfig.json')).toEqual(['tsc --noEmit'])
    expect(keys('go test ./...')).toEqual(['go test'])
    expect(keys('pytest')).toEqual(['pytest'])
  })

  it('drops cd/pushd steps and leading VAR=value assignments', () => {
    expect(keys('cd packages/auth && pnpm vitest run')).toEqual(['vitest run'])
    expect(keys('pushd web; CI=1 NODE_OPTIONS="--max-old-space-size=4096" vitest run; popd')).toEqual(['vitest run'])
    expect(keys('env -u HOME FOO=1 cargo test')).toEqual(['cargo test'])
  })

  it('unwraps package runners: npx, pnpm exec, pnpm dlx, yarn, bunx (and friends)', () => {
    for (const line of [
      'npx vitest run a.test.ts',
      'npx --yes vitest run',
      'pnpm exec vitest run',
      'pnpm dlx vitest run',
      'pnpm --filter web exec vitest run',
      'yarn vitest run',
      'yarn exec vitest run',
      'bunx vitest run',
      'npm exec -- vitest run',
      'pnpm vitest run tests/auth.test.ts',
    ]) expect(keys(line), line).toEqual(['vitest run'])
  })

  it('keys package scripts by script name, whichever manager runs them', () => {
    for (const line of ['pnpm test', 'npm test', 'npm run test', 'pnpm run test', 'yarn test', 'yarn run test', 'npm t']) {
      expect(keys(line), line).toEqual(['test'])
    }
    expect(keys('pnpm test -- --run')).toEqual(['test --run'])
    expect(keys('npm run build -- --watch')).toEqual(['build --watch'])
    // bun's own test runner is not a script.
    expect(keys('bun test')).toEqual(['bun test'])
    // A manager's own commands keep the manager.
    expect(keys('pnpm install --frozen-lockfile')).toEqual(['pnpm install'])
    expect(keys('npm ci')).toEqual(['npm ci'])
  })

  it('looks through wrappers, python -m, uv/poetry run and node_modules entry points', () => {
    expect(keys('timeout 60 cargo test --lib')).toEqual(['cargo test'])
    expect(keys('time nice -n 5 make check')).toEqual(['make check'])
    expect(keys('python3 -m pytest -q tests/')).toEqual(['pytest -q'])
    expect(keys('uv run pytest tests/')).toEqual(['pytest tests/'])
    expect(keys('node node_modules/typescript/bin/tsc --noEmit')).toEqual(['tsc --noEmit'])
  })

  it('splits compound commands on &&, ||, ;, |, & and newlines', () => {
    expect(keys('pnpm build && pnpm test || cat log.txt; make lint | tee out & go vet\ncargo fmt')).toEqual([
      'build', 'test', 'cat log.txt', 'make lint', 'tee out', 'go vet', 'cargo fmt',
    ])
  })

  it('reads bash -c / sh -c scripts', () => {
    expect(keys("bash -lc 'cd web && npx vitest run'")).toEqual(['vitest run'])
    expect(keys('sh -c "make test"')).toEqual(['make test'])
  })

  it('ignores redirections, quotes, comments and here-document bodies', () => {
    expect(keys('pnpm vitest run 2>&1 > out.log < /dev/null')).toEqual(['vitest run'])
    expect(keys('vitest "run" # vitest watch')).toEqual(['vitest run'])
    expect(keys("cat > notes.md <<'EOF'\nmake deploy\nrm -rf /\nEOF\ngo test ./...")).toEqual(['cat', 'go test'])
    expect(keys('echo "a && b; c" && make')).toEqual(['make'])
  })

  it('flattens groups and drops control-flow keywords', () => {
    expect(keys('(cd web && npm test) && { make; }')).toEqual(['test', 'make'])
    expect(keys('for f in a b; do go test $f; done')).toEqual(['go test'])
    expect(parseShell('if make; then echo ok; fi').control).toBe(true)
  })

  it('has no key for steps that run nothing worth claiming', () => {
    for (const line of ['cd web', 'export CI=1', 'FOO=1', 'echo done', 'true', 'test -f x', '[ -f x ]', 'sleep 1']) {
      expect(keys(line), line).toEqual([])
    }
    expect(unwrapCommand([])).toBeUndefined()
  })
})
