/**
 * Every registry install the tests use (vitest 1, 2 and 4, Jest with ts-jest,
 * the create-vite template with TypeScript 7), made at once into the tests'
 * install cache. `.ci/run` runs it before the tests, as it installs the pinned
 * agent CLIs, so a fresh clone's test run spends no time in npm; a test still
 * installs what it finds missing.
 *
 *   tsx packages/dsh-dstvalid/tests/install-fixtures.ts
 */
import { createViteTemplate, installCache, tsJestInstall, VITEST_RELEASES, vitestInstall } from './registry-installs.ts'

const majors = Object.keys(VITEST_RELEASES).map(Number) as (keyof typeof VITEST_RELEASES)[]
const installs: [string, () => Promise<string>][] = [
  ...majors.map((major): [string, () => Promise<string>] => [`vitest ${VITEST_RELEASES[major]}`, () => vitestInstall(major)]),
  ['jest with ts-jest', tsJestInstall],
  ['create-vite template (TypeScript 7)', createViteTemplate],
]
const results = await Promise.allSettled(installs.map(([, install]) => install()))
let failed = 0
results.forEach((r, i) => {
  const name = installs[i]![0]
  if (r.status === 'fulfilled') console.log(`${name}: ${r.value}`)
  else {
    failed++
    console.error(`${name}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`)
  }
})
console.log(`test installs in ${installCache}: ${installs.length - failed} of ${installs.length}`)
process.exitCode = failed ? 1 : 0
