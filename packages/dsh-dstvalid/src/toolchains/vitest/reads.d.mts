/** Types of reads.mjs (plain JavaScript, shared by the warm runner and the vitest CLI check). */
export interface Reads {
  read: Set<string>
  list: Set<string>
  tree: Set<string>
}
export type TestReads = Reads & { code: Reads }
export function loadReads(dir: string, files: Iterable<string>, reads: Map<string, TestReads>): void
export function readsSee(entry: Reads, file: string): boolean
export function usesFs(file: string): boolean
export function readersOf(reads: Map<string, TestReads>, tests: Iterable<string>, changed: readonly string[]): string[]
