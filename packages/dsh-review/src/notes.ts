import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomicSync } from 'dsh-common'

/**
 * Notes for a session's model, left by a person's undo in another process:
 * `<vault>/notes/<session>/<time>-<id>.txt`. The harness running that
 * session (the dsh-review plugin) takes them at the model's next step and
 * logs them as `context/message` (source `undo`).
 */
function notesDir(vault: string, sessionId: string): string {
  return join(vault, 'notes', sessionId.replace(/[^A-Za-z0-9._-]/g, '_'))
}

/** Leave a note for the session's model. */
export function writeUndoNote(vault: string, sessionId: string, id: string, text: string): void {
  const dir = notesDir(vault, sessionId)
  mkdirSync(dir, { recursive: true })
  writeFileAtomicSync(join(dir, `${Date.now().toString().padStart(15, '0')}-${id}.txt`), text)
}

/** The notes waiting for the session, oldest first, without taking them. */
export function pendingUndoNotes(vault: string, sessionId: string): string[] {
  try {
    return readdirSync(notesDir(vault, sessionId)).filter(n => n.endsWith('.txt')).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/**
 * Take the session's waiting notes, oldest first: each is claimed by a
 * rename first, so two harness processes never both deliver one.
 */
export function takeUndoNotes(vault: string, sessionId: string): string[] {
  const dir = notesDir(vault, sessionId)
  const texts: string[] = []
  for (const name of pendingUndoNotes(vault, sessionId)) {
    const claimed = join(dir, `${name}.taken-${process.pid}`)
    try {
      renameSync(join(dir, name), claimed)
    } catch (error) {
      // Another process took it.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw error
    }
    texts.push(readFileSync(claimed, 'utf8'))
    rmSync(claimed, { force: true })
  }
  return texts
}
