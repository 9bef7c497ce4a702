import { readFileSync, rmSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { readdirOrEmpty, writeFileAtomic } from 'dsh-common'

/** The vault's records a command must not change: its top-level files (the proof chain and its head) and the checkpoints. */
function recordFiles(vault: string): string[] {
  const files: string[] = []
  for (const dir of ['', 'checkpoints']) {
    for (const name of readdirOrEmpty(join(vault, dir))) {
      // Lock files and atomic-write temp files come and go with the harness's own writes.
      if (name.endsWith('.lock') || (name.startsWith('.') && name !== '.gitignore')) continue
      const rel = dir ? `${dir}/${name}` : name
      const content = readOrUndefined(join(vault, rel))
      if (content) files.push(rel)
    }
  }
  return files
}

function readOrUndefined(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch {
    // ENOENT, or a directory (EISDIR): not a record file.
    return undefined
  }
}

/**
 * Without namespaces a command can write the vault; this is the fallback:
 * the vault's record files as they were before the command, put back after
 * it when it changed them. A record that only grew by whole lines (a JSON
 * Lines file appended to) is kept: the harness itself may append during
 * the call, and an appended entry it did not write is caught by the seal
 * (`dsh proof verify`).
 */
export function guardVault(vault: string): { undo(): Promise<string[]> } {
  const before = new Map(recordFiles(vault).map(rel => [rel, readOrUndefined(join(vault, rel))!]))
  return {
    async undo() {
      const changed: string[] = []
      for (const [rel, old] of before) {
        const now = readOrUndefined(join(vault, rel))
        if (now?.equals(old)) continue
        if (now && rel.endsWith('.jsonl') && now.length > old.length && now.subarray(0, old.length).equals(old) && now.at(-1) === 0x0a) continue
        await mkdir(dirname(join(vault, rel)), { recursive: true })
        await writeFileAtomic(join(vault, rel), old)
        changed.push(rel)
      }
      for (const rel of recordFiles(vault)) {
        if (before.has(rel)) continue
        rmSync(join(vault, rel), { force: true })
        changed.push(rel)
      }
      return changed.sort()
    },
  }
}
