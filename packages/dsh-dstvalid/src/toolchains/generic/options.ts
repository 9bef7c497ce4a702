import Schema from '@deepseek-ai/schemastery'
import { optional } from 'dsh-common'

/** The generic toolchain's options (Config keys): commands judged by exit status. */
export const GENERIC_OPTIONS = {
  compileCommand: optional(Schema.string().description('Generic profile: a compile command (run by /bin/sh in the workspace), judged by exit status.')),
  testCommand: optional(Schema.string().description('Generic profile: a test command, judged by exit status.')),
}
