import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { startReviewServer } from 'dsh-review'
import { bool, parseArgs, str, UsageError, workspaceArg, type Command } from '../command.ts'

const usage = `Usage: dsh review --workspace DIR [--vault DIR] [--port N] [--no-open]

Serve a page, on this machine only, showing what the guarded agents did in
DIR: its sessions, and for each one its timeline — every call (tool, paths,
time), what it changed (shell calls too) as a diff, its verdict (kept,
warned, rolled back, provisional, not verified, group rollback) with each
check's name and time, the exact message the model saw, undos, the last
checkpoint with the marks its claims got, and whether the proof chain
verifies. A page follows a running session live (with JavaScript on; it
reads right without). Each kept call has an Undo button (as dsh undo).

The page listens on 127.0.0.1 only, and every request must carry the token
made for this launch: the URL printed on the first line of stdout has it.
It serves until stopped (Ctrl-C).

Options:
  --workspace DIR   the workspace (required)
  --vault DIR       vault directory (default: DIR/.dsh)
  --port N          port on 127.0.0.1 (default: a free one)
  --no-open         do not open a browser; just print the URL
  -h, --help        show this help

Exit status: 0 stopped by a signal, 1 the page could not be served, 2 bad usage.
`

export const reviewCommand: Command = {
  name: 'review',
  summary: 'serve a local page of the sessions: each call, its diff and verdict, with undo',
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: { workspace: 'string', vault: 'string', port: 'string', 'no-open': 'boolean' } }, 'review')
    const workspace = workspaceArg(args, 'review')
    const vault = resolve(str(args, 'vault') ?? join(workspace, '.dsh'))
    const portText = str(args, 'port') ?? '0'
    const port = Number(portText)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`dsh review: --port must be a port number, not "${portText}"`)
    if (!existsSync(vault)) io.stderr(`dsh review: no vault at ${vault} yet (no guarded session ran in ${workspace}); the page will show sessions as they come\n`)
    let server
    try {
      server = await startReviewServer({ workspace, vault, port })
    } catch (error) {
      io.stderr(`dsh review: cannot serve on 127.0.0.1:${port}: ${(error as Error).message}\n`)
      return 1
    }
    io.stdout(`${server.url}\n`)
    io.stderr('dsh review: serving until stopped (Ctrl-C)\n')
    if (!bool(args, 'no-open')) openBrowser(server.url)
    const stopped = await new Promise<NodeJS.Signals>(done => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, () => done(s))
    })
    await server.close()
    io.stderr(`dsh review: stopped (${stopped})\n`)
    return 0
  },
}

/** The user's browser, detached: it is theirs, it outlives this command. */
function openBrowser(url: string) {
  const argv = process.platform === 'darwin' ? ['open', url] : process.platform === 'win32' ? ['cmd', '/c', 'start', '', url] : ['xdg-open', url]
  try {
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore' })
    child.on('error', () => { /* no opener here: the URL is printed */ })
    child.unref()
  } catch {
    // No opener here: the URL is printed.
  }
}
