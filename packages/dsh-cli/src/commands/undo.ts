import { join, resolve } from 'node:path'
import { describeRecords, latestSession, readSession, undo, undoable, UndoError, type CallView } from 'dsh-review'
import { KeptStore, type KeptRecord } from 'dsh-snapshot'
import { bool, parseArgs, str, UsageError, workspaceArg, type Command } from '../command.ts'

const usage = `Usage: dsh undo [CALL] --workspace DIR [--session ID] [--since CALL] [--force] [--vault DIR] [--json]
       dsh undo --list --workspace DIR [--session ID] [--vault DIR] [--json]

Take back what a guarded agent's kept call changed, byte for byte: files it
created are removed, files it deleted or changed are put back — shell calls
(sed -i, rm, a formatter) included. A path a later write also changed is
merged line by line when the two touched different lines (the later change
stays); where they touched the same or adjacent lines, or the file is not
text, nothing is changed and the paths are named, unless --force. What the
undo replaced is recorded, so an undo can itself be undone (its id is
printed). When the session is still running, its model is told at its next
step what changed.

  CALL          a call id of the session (e.g. call_3_0, toolu_…), or an id
                from --list (an undo's id takes that undo back). Without
                CALL: the last kept call of the latest session
                that has one.

Options:
  --workspace DIR   the workspace (required)
  --session ID      the session CALL belongs to (default: the latest session)
  --since CALL      take back CALL and every kept call after it in the session
  --force           overwrite paths a later write changed on the same lines
  --list            list what can be taken back (and what cannot, and why)
  --vault DIR       vault directory (default: DIR/.dsh)
  --json            machine-readable output on stdout
  -h, --help        show this help

The before and after images are kept by dsh-snapshot (keepBytes, keepDays):
records past that bound are pruned, and listed as such.

Exit status: 0 done (or listed), 1 refused (nothing was changed), 2 bad usage.
`

export const undoCommand: Command = {
  name: 'undo',
  summary: 'take back a kept call (or every call after one), byte for byte; an undo can be undone',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', vault: 'string', session: 'string', since: 'string', force: 'boolean', list: 'boolean', json: 'boolean' }, positionals: { max: 1, name: 'CALL' } }, 'undo')
    const workspace = workspaceArg(args, 'undo')
    const vault = resolve(str(args, 'vault') ?? join(workspace, '.dsh'))
    const records = new KeptStore(vault).read()
    const json = bool(args, 'json')
    if (bool(args, 'list')) return list(records, str(args, 'session'), json, io)
    const since = str(args, 'since')
    const call = args.positionals[0]
    if (since && call) throw new UsageError('dsh undo: give CALL or --since CALL, not both (see dsh undo --help)')
    const sessionId = str(args, 'session') ?? sessionOf(records, since ?? call) ?? latestKept(records) ?? latestSession(vault)
    if (!sessionId) {
      io.stderr(`dsh undo: no session recorded in ${vault}\n`)
      return 1
    }
    let ids: string[]
    try {
      ids = choose(records, sessionId, call, since)
    } catch (error) {
      if (!(error instanceof UndoError)) throw error
      io.stderr(`${error.message}\n`)
      return 1
    }
    const calls = new Map((readSession(vault, sessionId)?.items ?? []).filter((i): i is CallView => i.kind === 'call').map(i => [i.callId, i]))
    try {
      const result = await undo({
        workspace, vault, ids, force: bool(args, 'force'),
        describeCall: (_s, callId) => { const c = calls.get(callId); return c ? `${c.tool} ${c.paths.join(', ')}`.trim() : undefined },
      })
      if (json) {
        io.stdout(JSON.stringify({ id: result.record.id, undid: result.undid.map(r => r.id), restored: result.restored, deleted: result.deleted, merged: result.merged, forced: result.forced, note: result.note }) + '\n')
        return 0
      }
      const did = [result.restored.length ? `restored ${result.restored.join(', ')}` : '', result.deleted.length ? `deleted ${result.deleted.join(', ')}` : ''].filter(Boolean).join('; ') || 'nothing needed changing'
      io.stdout(`took back ${describeRecords(result.undid)}: ${did}\n`)
      if (result.merged.length) io.stdout(`  merged with later changes to other lines: ${result.merged.join(', ')}\n`)
      if (result.forced.length) io.stdout(`  overwrote later changes (--force): ${result.forced.join(', ')}\n`)
      io.stdout(`  recorded as ${result.record.id}; put it back with: dsh undo ${result.record.id} --workspace ${workspace}\n`)
      return 0
    } catch (error) {
      if (!(error instanceof UndoError)) throw error
      if (json) io.stdout(JSON.stringify({ error: error.message, conflicts: error.conflicts }) + '\n')
      else io.stderr(`${error.message}\n`)
      return 1
    }
  },
}

/** The session a record id or call id belongs to, when it names one in the store. */
function sessionOf(records: readonly KeptRecord[], id: string | undefined): string | undefined {
  if (!id) return undefined
  return records.find(r => r.id === id)?.sessionId
}

/** The session of the newest call that can be taken back (a later session that kept nothing does not hide it). */
function latestKept(records: readonly KeptRecord[]): string | undefined {
  return [...records].reverse().find(r => r.kind === 'commit' && undoable(r, records).ok)?.sessionId
}

/** The records to take back. */
function choose(records: readonly KeptRecord[], sessionId: string, call: string | undefined, since: string | undefined): string[] {
  const ofSession = records.filter(r => r.sessionId === sessionId && r.kind !== 'rollback')
  const find = (id: string) => records.find(r => r.id === id) ?? [...ofSession].reverse().find(r => r.callIds.includes(id))
  if (since) {
    const from = find(since)
    if (!from) throw new UndoError(`dsh undo: no kept call ${since} in session ${sessionId} (see dsh undo --list)`)
    const chosen = ofSession.filter(r => r.kind === 'commit' && r.time >= from.time && undoable(r, records).ok)
    if (!chosen.length) throw new UndoError(`dsh undo: nothing to take back from ${since} on in session ${sessionId}`)
    return chosen.map(r => r.id)
  }
  if (call) {
    const r = find(call)
    if (!r) throw new UndoError(`dsh undo: no kept call ${call} in session ${sessionId} (see dsh undo --list)`)
    return [r.id]
  }
  const last = [...ofSession].reverse().find(r => r.kind === 'commit' && undoable(r, records).ok)
  if (!last) throw new UndoError(`dsh undo: nothing to take back in session ${sessionId} (see dsh undo --list)`)
  return [last.id]
}

function list(records: readonly KeptRecord[], sessionId: string | undefined, json: boolean, io: { stdout(t: string): void }): number {
  const shown = records.filter(r => r.kind !== 'rollback' && (!sessionId || r.sessionId === sessionId)).reverse()
  if (json) {
    io.stdout(JSON.stringify(shown.map(r => {
      const can = undoable(r, records)
      return { id: r.id, sessionId: r.sessionId, callIds: r.callIds, kind: r.kind, time: r.time, paths: r.changes.map(c => c.path), undoable: can.ok, ...(can.ok ? {} : { why: can.why }), ...(r.pruned ? { pruned: r.pruned } : {}) }
    })) + '\n')
    return 0
  }
  if (!shown.length) {
    io.stdout(`nothing kept to take back${sessionId ? ` in session ${sessionId}` : ''}\n`)
    return 0
  }
  let session: string | undefined
  for (const r of shown) {
    if (r.sessionId !== session) {
      session = r.sessionId
      io.stdout(`session ${session}\n`)
    }
    const can = undoable(r, records)
    const what = r.kind === 'undo' ? `${r.id} (${r.reason})` : `${r.callIds.join(', ')}`
    const paths = r.changes.map(c => c.path)
    const list = paths.length > 6 ? `${paths.slice(0, 6).join(', ')} … and ${paths.length - 6} more` : paths.join(', ')
    io.stdout(`  ${can.ok ? 'can undo ' : 'cannot   '} ${new Date(r.time).toISOString().slice(0, 19).replace('T', ' ')}  ${what}  ${list}${can.ok ? '' : `  (${can.why})`}\n`)
  }
  return 0
}
