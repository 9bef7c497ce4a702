/** dsh-cli — the `dsh` command. Library surface for tests and for other commands. */
export * from './command.ts'
export { main, defaultIO, runMain, type Program } from './main.ts'
export * from './harness.ts'
