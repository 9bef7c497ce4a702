import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { onPath } from '../../modes/style-tool.ts'
import type { Toolchain } from '../toolchain.ts'
import { GoBuildCheck, GoTestCheck, GoVetCheck } from './check.ts'
import { GofmtTool } from './gofmt.ts'
import { GoImpact } from './impact.ts'

/** Go: `go build` and `go vet` per package, `go test -json` (with a cover profile for the coverage mode), `go list` imports as change impact, gofmt. */
export const go: Toolchain = {
  name: 'go',
  profile: 'go',
  detect: root => existsSync(join(root, 'go.mod')),
  styleTools: [{
    name: 'gofmt',
    configFiles: ['go.mod'],
    locate: root => {
      const gofmt = onPath('gofmt')
      return gofmt ? new GofmtTool(root, gofmt) : 'gofmt is not on PATH; style does not check Go formatting'
    },
  }],
  contribute({ root, config }) {
    const coverage = config.coverage.threshold > 0
    const tests = config.tests !== 'off' ? new GoTestCheck(root, config.tests, config.testArgs, coverage) : undefined
    return {
      checks: [new GoBuildCheck(root), new GoVetCheck(root)],
      impact: [new GoImpact(root)],
      ...(tests ? { tests: [tests], ...(coverage ? { coverage: tests } : {}) } : {}),
    }
  },
}
