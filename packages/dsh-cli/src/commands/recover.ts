import { join, resolve } from 'node:path'
import { formatRecovery, recoverVault } from 'dsh-snapshot'
import { bool, parseArgs, str, workspaceArg, type Command } from '../command.ts'

const usage = `Usage: dsh recover --workspace DIR [--vault DIR] [--force] [--restore-unproven]

Resolve the snapshot journals (<vault>/snapshots) a dead dsh process left
behind: a write without a verdict is rolled back, a rollback cut short is
finished, a committed write is kept. Prints what was done, then removes each
resolved journal. Needs no harness; the plugin does the same when it starts.

Options:
  --workspace DIR   the workspace the journals belong to (required)
  --vault DIR       vault directory (default: DIR/.dsh)
  --force           also resolve journals whose writer still looks alive
  --restore-unproven
                    resolve a journal whose last record is cut short (or a
                    damaged one) from the records before the cut, as if it
                    ended there: writes without a readable verdict are rolled
                    back (check them first: the cut record may have been a
                    verdict that kept them)
  -h, --help        show this help

A journal is never removed on a guess: one whose workspace no longer exists
(moved?), whose last capture was cut short while the file no longer matches
it, whose last record was cut short where it may have been a verdict, or
with a damaged record, is kept, nothing unproven is restored, and the
output says what was found and what to do.

Exit status: 0 resolved (or nothing to do), 1 some path could not be restored,
a journal was damaged, or what it holds could not be proven (it is kept), 2 bad
usage or bad input.
`

export const recoverCommand: Command = {
  name: 'recover',
  summary: 'finish or undo the writes a crashed harness left in flight (snapshot journals)',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', vault: 'string', force: 'boolean', 'restore-unproven': 'boolean' } }, 'recover')
    const root = workspaceArg(args, 'recover')
    const vault = resolve(str(args, 'vault') ?? join(root, '.dsh'))
    const report = await recoverVault(vault, { workspace: root, force: bool(args, 'force'), restoreUnproven: bool(args, 'restore-unproven') })
    io.stdout(formatRecovery(report))
    return report.journals.some(j => !j.removed) ? 1 : 0
  },
}
