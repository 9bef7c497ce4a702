import Schema from '@deepseek-ai/schemastery'
import { optional } from 'dsh-common'
import { DEFAULT_EXCLUDES } from './internal/ignore.ts'

export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
export const DEFAULT_MAX_DIR_BYTES = 256 * 1024 * 1024
/** A day of work on a 10,000-file project (8 KiB a file): a repo-wide rewrite's before and after (~160 MiB) and hundreds of edits. */
const DEFAULT_KEEP_BYTES = 512 * 1024 * 1024

/**
 * The plugin's options: the one source of their text and defaults. The
 * type below, the guard's settings, `Snapshots`' options and the README
 * table derive from it.
 */
export const Config = Schema.object({
  scope: Schema.union(['call', 'step'] as const).default('call').description('Rollback granularity: one write call, or all write calls of an agent step.'),
  vault: optional(Schema.string().description('Vault directory; the journal goes to <vault>/snapshots. Default: each session\'s vault (<workspace>/.dsh).')),
  fsync: Schema.union(['capture', 'always', 'off'] as const).default('capture').description('capture: fsync the journal before each write runs; always: also after each verdict; off: never (throwaway workspaces).'),
  maxFileBytes: Schema.natural().default(DEFAULT_MAX_FILE_BYTES).description('Largest file a capture holds; a write to a bigger file is refused.'),
  maxDirBytes: Schema.natural().default(DEFAULT_MAX_DIR_BYTES).description('Largest total a directory capture holds.'),
  exclude: Schema.array(String).default([...DEFAULT_EXCLUDES]).description('Gitignore patterns a directory capture skips by default: tool caches that rebuild themselves (.git, node_modules and the vault are always skipped).'),
  ignore: Schema.array(String).default([]).description('More gitignore patterns a directory capture skips, after exclude (a !pattern re-includes what exclude skipped).'),
  shell: Schema.union(['track', 'git', 'off'] as const).default('track').description('track: keep a warm picture of the workspace so each shell call\'s changes are known and can be rolled back; git: snapshot the working tree of a git workspace before each shell call; off: shell calls are not snapshotted (with git and off, what one changed is found by file times and sizes).'),
  shellMaxFileBytes: Schema.natural().default(1_048_576).description('track: files larger than this are watched for changes but their bytes are not kept (a change to one cannot be rolled back).'),
  gitRefs: Schema.boolean().default(true).description('Before each shell call, record git HEAD, refs and index (read from .git, no git process); rolling the call back puts back what it moved (a commit, an amend, a reset, a branch move), and a kept call that put uncommitted files back to their committed content is noted.'),
  recover: Schema.boolean().default(true).description('Resolve journals left by dead processes when a vault is first used.'),
  elsewhere: Schema.boolean().default(false).description('The tools run in another process (an agent seen through its hooks): each call\'s post record, written as its tool returns, says what it left; recovery restores a file only while it still holds that, and leaves a call whose result never came as it is.'),
  keepBytes: Schema.natural().default(DEFAULT_KEEP_BYTES).description('Bytes of kept calls\' before and after images held for dsh undo and dsh review past their session (oldest pruned first; 0 keeps none).'),
  keepDays: Schema.number().min(0).default(7).description('Days kept calls\' before and after images are held for dsh undo and dsh review past their session.'),
  lockWaitMs: Schema.natural().default(600_000).description('How long a write or shell call waits for another session on the same workspace to finish its write (its judgement included) before it is refused.'),
})
export type Config = Schemastery.TypeT<typeof Config>
