import { resolveInside, toPosixRelative } from 'dsh-common'
import { pathState } from './post-image.ts'

/** Files changed before a call that this session's calls did not make: by nobody guarded, or by another session's guarded call. */
export interface Outside {
  outside: string[]
  /** By session id: what its last guarded call left there (and nobody changed since). */
  others: Map<string, string[]>
}

export const NOTHING_OUTSIDE: Outside = { outside: [], others: new Map() }

/**
 * Per workspace root: the session whose guarded call last wrote each path,
 * and what it left, so a later change found by another session is not
 * blamed on anyone when it is that call's.
 */
export class WrittenBy {
  private readonly _roots = new Map<string, Map<string, { sessionId: string; state: string | null }>>()

  /** What a guarded call of a session wrote (a writer's paths, a command's measured changes), as it left them. */
  note(root: string, sessionId: string, paths: readonly string[]): void {
    const touched: string[] = []
    for (const p of paths) {
      try {
        touched.push(toPosixRelative(root, resolveInside(root, p)))
      } catch {
        // Outside the workspace: refused before it ran.
      }
    }
    if (!touched.length) return
    let written = this._roots.get(root)
    if (!written) this._roots.set(root, written = new Map())
    for (const file of touched) written.set(file, { sessionId, state: pathState(root, file) })
  }

  /** Split changed files into those nobody guarded and those another session's call left as they are. */
  split(root: string, sessionId: string, files: readonly string[]): Outside {
    const written = this._roots.get(root)
    const out: Outside = { outside: [], others: new Map() }
    for (const file of files) {
      const by = written?.get(file)
      if (by && by.sessionId !== sessionId && by.state === pathState(root, file)) {
        out.others.set(by.sessionId, [...(out.others.get(by.sessionId) ?? []), file])
      } else {
        out.outside.push(file)
      }
    }
    return out
  }
}
