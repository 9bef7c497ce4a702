import type { Toolchain } from '../toolchain.ts'
import { CommandCheck } from './check.ts'

/** The configured commands (`compileCommand`, `testCommand`), judged by exit status; on whenever one is configured. */
export const generic: Toolchain = {
  name: 'generic',
  profile: 'generic',
  configured: config => !!(config.compileCommand || config.testCommand),
  contribute({ root, config }) {
    return {
      checks: config.compileCommand ? [new CommandCheck('compile', config.compileCommand, root)] : [],
      tests: config.testCommand && config.tests !== 'off' ? [new CommandCheck('test', config.testCommand, root)] : [],
    }
  },
}
