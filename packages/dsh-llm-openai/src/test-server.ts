/**
 * A local server that speaks the chat-completions streaming protocol, for
 * tests and demos: it answers each request from a list (or a function) of
 * replies and records what it was sent. Listens on 127.0.0.1 only.
 *
 * @example
 * const server = await startProtocolServer([{ stream: textStream('Hello!') }])
 * // point the adapter at server.baseUrl …
 * await server.close()
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import type { ScriptStep } from 'dsh-llm'
import type { WireRequest } from './wire.ts'

/** A streamed answer: each item is sent as one SSE event (objects as `data: <json>`, strings verbatim). */
export interface StreamReply {
  stream: (object | string)[]
  /** End with `data: [DONE]` (default true). */
  done?: boolean
  /** Write the body in slices of this many bytes (splits lines, JSON and UTF-8 characters). */
  sliceBytes?: number
  /** Pause between writes, in ms (default 0; with `sliceBytes` ≥ 1 so slices arrive apart). */
  pauseMs?: number
  /** Destroy the connection after this many items (a disconnect mid-stream). */
  cutAfter?: number
  /** After the items, keep the connection open without ending it (until the client goes). */
  hang?: boolean
  /** Hold item number `before` back until `until` settles (to observe what arrived so far). */
  gate?: { before: number; until: Promise<unknown> }
  headers?: Record<string, string>
}

/** A plain answer: an error status, or a JSON/text body. */
export interface PlainReply {
  status: number
  json?: unknown
  text?: string
  headers?: Record<string, string>
}

/** Close the connection without answering. */
export interface ResetReply {
  reset: true
}

export type Reply = StreamReply | PlainReply | ResetReply

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The JSON body as sent (parsed, not validated; undefined when it did not parse). */
  body?: WireRequest
}

export interface ProtocolServer {
  /** `http://127.0.0.1:<port>/v1` — what to set as the adapter's baseUrl. */
  baseUrl: string
  requests: RecordedRequest[]
  /** Responses the client walked away from before they ended (aborts). */
  readonly clientAborts: number
  /** Resolves when the client has walked away from `n` responses in total. */
  waitForClientAborts(n: number): Promise<void>
  close(): Promise<void>
}

let chunkId = 0

/** One `chat.completion.chunk` with a delta (and optionally a finish reason). */
export function chunk(delta: object, finishReason: string | null = null): object {
  return { id: `chatcmpl-${++chunkId}`, object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finishReason }] }
}

/** The usage chunk servers send last when asked for `include_usage` (empty `choices`). */
export function usageChunk(promptTokens: number, completionTokens: number): object {
  return { id: `chatcmpl-${++chunkId}`, object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens } }
}

function pieces(text: string, size: number): string[] {
  const out: string[] = []
  const chars = [...text]
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''))
  return out
}

/** A text answer in deltas of `size` characters, with a `stop` finish. */
export function textStream(text: string, size = 4): object[] {
  return [chunk({ role: 'assistant', content: '' }), ...pieces(text, size).map(p => chunk({ content: p })), chunk({}, 'stop')]
}

export interface StreamedCall {
  id?: string
  name: string
  arguments: object
}

/**
 * Tool calls whose JSON arguments arrive in deltas of `size` characters,
 * the calls' deltas interleaved round-robin (index 0, 1, 0, 1 …), then a
 * `tool_calls` finish. Optional leading text.
 */
export function toolCallStream(calls: StreamedCall[], options: { size?: number; text?: string } = {}): object[] {
  const size = options.size ?? 5
  const out: object[] = [chunk({ role: 'assistant', content: null })]
  if (options.text) out.push(...pieces(options.text, size).map(p => chunk({ content: p })))
  calls.forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }))
  })
  const split = calls.map(c => pieces(JSON.stringify(c.arguments), size))
  for (let round = 0; split.some(s => round < s.length); round++) {
    split.forEach((parts, index) => {
      if (round < parts.length) out.push(chunk({ tool_calls: [{ index, function: { arguments: parts[round] } }] }))
    })
  }
  out.push(chunk({}, 'tool_calls'))
  return out
}

/**
 * Serve a dsh-llm script (the scripted adapter's JSON Lines steps) over the
 * protocol: request N gets step N, streamed; past the end, a final text.
 */
export function scriptReplies(steps: readonly ScriptStep[], options: { size?: number } = {}): (request: RecordedRequest, index: number) => Reply {
  return (_request, index) => {
    const step = steps[index]
    if (!step) return { stream: [...textStream('Script finished.', options.size), usageChunk(10, 3)] }
    const calls = step.toolCalls ?? []
    const body = calls.length
      ? toolCallStream(calls.map((c, i) => ({ id: c.id ?? `call_${index}_${i}`, name: c.name, arguments: c.arguments })), { size: options.size, text: step.text })
      : textStream(step.text ?? '', options.size)
    return { stream: [...body, usageChunk(10 * (index + 1), 5)] }
  }
}

async function writeStream(res: ServerResponse, reply: StreamReply, cut: () => void) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers })
  res.socket?.setNoDelay(true)
  const items = reply.stream.map(item => (typeof item === 'string' ? item : `data: ${JSON.stringify(item)}\n\n`))
  const send = async (text: string) => {
    const bytes = Buffer.from(text)
    const step = reply.sliceBytes ?? bytes.length
    for (let i = 0; i < bytes.length; i += Math.max(1, step)) {
      if (res.destroyed) return
      res.write(bytes.subarray(i, i + Math.max(1, step)))
      if (reply.pauseMs) await delay(reply.pauseMs)
    }
  }
  for (let i = 0; i < items.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter) {
      await delay(20) // let the written items reach the client first
      cut()
      res.socket?.destroy()
      return
    }
    if (reply.gate?.before === i) await reply.gate.until.catch(() => {})
    await send(items[i]!)
  }
  if (reply.hang) return
  if (reply.done !== false) await send('data: [DONE]\n\n')
  res.end()
}

/** How the server judges a request's messages before answering. */
export interface ProtocolServerOptions {
  /**
   * `system-first`: like the chat templates of vLLM and llama.cpp, reject
   * (400, vLLM's error shape) a request with a `system` message anywhere but
   * first; the request is recorded, the reply list is not consumed.
   */
  template?: 'system-first'
}

/** The message of the 400 a `system-first` server answers (what vLLM relays from the template). */
export const SYSTEM_FIRST_ERROR = 'System message must be at the beginning.'

/** Start a protocol server on 127.0.0.1 (a free port). */
export async function startProtocolServer(replies: Reply[] | ((request: RecordedRequest, index: number) => Reply), options: ProtocolServerOptions = {}): Promise<ProtocolServer> {
  let answered = 0
  const requests: RecordedRequest[] = []
  let clientAborts = 0
  const waiters: { n: number; resolve: () => void }[] = []
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8')
      let body: WireRequest | undefined
      try {
        body = JSON.parse(text) as WireRequest
      } catch {
        body = undefined
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route for ${req.method} ${req.url}` } }))
        return
      }
      requests.push(recorded)
      if (options.template === 'system-first' && body?.messages?.some((m, i) => i > 0 && m.role === 'system')) {
        res.writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'error', message: SYSTEM_FIRST_ERROR, type: 'BadRequestError', param: null, code: 400 }))
        return
      }
      const index = answered++
      const reply = typeof replies === 'function' ? replies(recorded, index) : replies[index]
      let cut = false
      res.on('close', () => {
        if (res.writableFinished || cut || !reply || 'reset' in reply) return
        clientAborts++
        for (const w of waiters.filter(w => clientAborts >= w.n)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve()
        }
      })
      if (!reply) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `test server: no reply for request ${index}` } }))
      } else if ('reset' in reply) {
        req.socket.destroy()
      } else if ('stream' in reply) {
        writeStream(res, reply, () => { cut = true }).catch(() => res.destroy())
      } else {
        const isJson = reply.json !== undefined
        res.writeHead(reply.status, { 'content-type': isJson ? 'application/json' : 'text/plain', ...reply.headers })
        res.end(isJson ? JSON.stringify(reply.json) : reply.text ?? '')
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get clientAborts() {
      return clientAborts
    },
    waitForClientAborts(n) {
      if (clientAborts >= n) return Promise.resolve()
      return new Promise(resolve => waiters.push({ n, resolve }))
    },
    close() {
      server.closeAllConnections()
      return new Promise(resolve => server.close(() => resolve()))
    },
  }
}
