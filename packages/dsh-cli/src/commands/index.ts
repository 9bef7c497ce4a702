import type { Command } from '../command.ts'
import { runCommand } from './run.ts'
import { demoCommand } from './demo.ts'
import { lintLogCommand } from './lint-log.ts'
import { proofCommand } from './proof.ts'
import { devCommand } from './dev.ts'
import { chatCommand } from './chat.ts'
import { recoverCommand } from './recover.ts'
import { claimsCommand } from './claims.ts'
import { hooksCommand } from './hooks.ts'
import { tryCommand } from './try.ts'
import { reviewCommand } from './review.ts'
import { undoCommand } from './undo.ts'

/** Every `dsh` subcommand, in the order `dsh --help` lists them. Add one import + one entry per command. */
export const commands: Command[] = [
  runCommand,
  chatCommand,
  demoCommand,
  lintLogCommand,
  proofCommand,
  devCommand,
  recoverCommand,
  claimsCommand,
  hooksCommand,
  tryCommand,
  reviewCommand,
  undoCommand,
]
