/**
 * Runs inside a loopback-only network namespace (started by `runInLoopback`):
 * listens on 127.0.0.1:<port> for each `--forward <port>=<socket>`, pipes
 * every connection to that unix socket, then starts the command after `--`
 * and exits with its status. One process, so the command never starts
 * before the ports listen.
 *
 *   node --import tsx loopback-launcher.ts --forward 8787=/tmp/x/model.sock -- codex exec …
 */
import { spawn } from 'node:child_process'
import { createConnection, createServer, type Server } from 'node:net'

const argv = process.argv.slice(2)
const split = argv.indexOf('--')
const [command, ...args] = argv.slice(split + 1)
if (split < 0 || !command) {
  process.stderr.write('usage: loopback-launcher [--forward PORT=SOCKET]… -- COMMAND [ARG]…\n')
  process.exit(2)
}

const servers: Server[] = []
for (let i = 0; i < split; i += 2) {
  const [port, socket] = [argv[i + 1]!.slice(0, argv[i + 1]!.indexOf('=')), argv[i + 1]!.slice(argv[i + 1]!.indexOf('=') + 1)]
  const server = createServer(client => {
    const upstream = createConnection(socket)
    client.pipe(upstream).pipe(client)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(Number(port), '127.0.0.1', resolve)
  })
  servers.push(server)
}

const child = spawn(command, args, { stdio: 'inherit' })
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal))
child.on('error', error => {
  process.stderr.write(`loopback-launcher: ${command}: ${error.message}\n`)
  process.exit(127)
})
child.on('exit', (code, signal) => {
  for (const server of servers) server.close()
  process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15))
})
