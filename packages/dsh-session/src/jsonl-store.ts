import { join } from 'node:path'
import { readJsonl, type JsonlRead } from 'dsh-common'
import type { RawSessionEvent } from './types.ts'

/** `<vault>/sessions/<id>.jsonl` */
export function sessionLogPath(vault: string, sessionId: string): string {
  return join(vault, 'sessions', `${sessionId}.jsonl`)
}

/**
 * Read a stored session log. A torn last line (a crash mid-write) is
 * dropped and reported as `torn`; any other corrupt line throws a
 * `JsonlError` naming its line number.
 */
export function readSessionLog(file: string): JsonlRead<RawSessionEvent> {
  return readJsonl<RawSessionEvent>(file)
}
