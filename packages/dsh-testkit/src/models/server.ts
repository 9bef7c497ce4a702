/**
 * The plumbing every scripted model server shares: an HTTP server on a unix
 * socket that records each request (parsed JSON body) and answers it with
 * what a protocol module decides — a stream of server-sent events or a JSON
 * body. A unix socket, not a TCP port: the agent CLIs run in a loopback-only
 * network namespace where this process's ports are out of reach, while a
 * socket path is reachable from every namespace (`runInLoopback` forwards a
 * port inside the namespace to it).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { join } from 'node:path'
import { tempDir } from '../temp.ts'

export interface ModelRequest {
  method: string
  /** Path and query, as sent (`/v1/responses`, `/v1beta/models/m:streamGenerateContent?alt=sse`). */
  path: string
  headers: IncomingHttpHeaders
  /** The JSON body, parsed (undefined when empty or not JSON). */
  body: unknown
  /** When its body had arrived (`performance.now()` of this process): the model's side of the agent's timing. */
  time: number
}

/** One server-sent event: `event: <event>` (when set) and `data: <JSON of data>`. */
export interface SseEvent {
  event?: string
  data: unknown
}

export type ModelReply = { sse: SseEvent[] } | { status: number; json: unknown }

export interface ModelServer {
  /** The unix socket it listens on. */
  socketPath: string
  /** Every request received, in order. */
  requests: ModelRequest[]
  close(): Promise<void>
}

/** Start a server answering each request with `answer(request)`; requests are recorded before they are answered. */
export async function startModelServer(answer: (request: ModelRequest) => ModelReply): Promise<ModelServer> {
  const socketPath = join(tempDir('dsh-model-'), 'model.sock')
  const requests: ModelRequest[] = []
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8')
      let body: unknown
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        // not JSON: recorded without a body
      }
      const request: ModelRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, time: performance.now() }
      requests.push(request)
      let reply: ModelReply
      try {
        reply = answer(request)
      } catch (error) {
        reply = { status: 500, json: { error: { message: `scripted model: ${(error as Error).message}` } } }
      }
      if ('sse' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        for (const e of reply.sse) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`)
        res.end()
      } else {
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json))
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, resolve)
  })
  return {
    socketPath,
    requests,
    close() {
      server.closeAllConnections()
      return new Promise(resolve => server.close(() => resolve()))
    },
  }
}

/** A scripted tool call; `arguments` as a string is a freeform tool's input (Codex's `apply_patch`). */
export interface AgentToolCall {
  name: string
  arguments: Record<string, unknown> | string
}

/** One scripted model answer: optional text, then tool calls. */
export interface AgentStep {
  text?: string
  toolCalls?: AgentToolCall[]
}

/** The JSON error body model APIs answer an unknown route with. */
export function notFound(request: ModelRequest): ModelReply {
  return { status: 404, json: { error: { message: `scripted model: no route for ${request.method} ${request.path}` } } }
}
