import { createInterface } from 'node:readline'
import { hookPaths } from './paths.ts'
import { hostStatus, requestSocket } from './server.ts'

export interface McpOptions {
  vault: string
  input: NodeJS.ReadableStream
  output: (line: string) => void
  /** Start the workspace's host when it is down (the agent may start the MCP server before any hook). */
  startHost(): void
  /** How long a request waits for a starting host (default 60 s). */
  waitMs?: number
}

interface Rpc {
  jsonrpc: '2.0'
  id?: number | string | null
  method?: string
  params?: Record<string, unknown>
}

type SuiteTool = { name: string; description: string; parameters: unknown }

/**
 * A stdio MCP server (newline-delimited JSON-RPC, as MCP clients speak it)
 * offering the suite's own tools (`checkpoint`) to the agent. It holds no
 * suite itself: each call goes to the workspace's host, which runs it in the
 * session whose pre hook announced it, so claims are held against what that
 * session's hooks saw run. Resolves when the input ends.
 */
export async function runMcpServer(options: McpOptions): Promise<void> {
  const socket = hookPaths(options.vault).socket
  const waitMs = options.waitMs ?? 60_000

  const ask = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const deadline = Date.now() + waitMs
    let started = false
    for (;;) {
      const status = await hostStatus(options.vault)
      if (status.state === 'up') return JSON.parse(await requestSocket(socket, method, path, body === undefined ? undefined : JSON.stringify(body), 600_000))
      if (status.state === 'down' && !started) {
        options.startHost()
        started = true
      }
      if (Date.now() > deadline) throw new Error(`the dsh host of this workspace did not come up within ${waitMs / 1000} s (see ${hookPaths(options.vault).log})`)
      await new Promise(r => setTimeout(r, 250))
    }
  }

  const answer = async (msg: Rpc): Promise<unknown> => {
    switch (msg.method) {
      case 'initialize':
        return { protocolVersion: typeof msg.params?.protocolVersion === 'string' ? msg.params.protocolVersion : '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'dsh', version: '0.1.0' } }
      case 'ping':
        return {}
      case 'tools/list': {
        const tools = await ask('GET', '/suite/tools') as SuiteTool[]
        return { tools: tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.parameters })) }
      }
      case 'tools/call': {
        const result = await ask('POST', '/suite/call', { name: msg.params?.name, arguments: msg.params?.arguments ?? {} }) as { content: string; isError?: boolean }
        return { content: [{ type: 'text', text: result.content }], isError: !!result.isError }
      }
      default:
        throw Object.assign(new Error(`method not found: ${msg.method}`), { rpcCode: -32601 })
    }
  }

  const lines = createInterface({ input: options.input })
  const inFlight = new Set<Promise<void>>()
  for await (const line of lines) {
    if (!line.trim()) continue
    let msg: Rpc
    try {
      msg = JSON.parse(line) as Rpc
    } catch {
      options.output(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }))
      continue
    }
    if (msg.id === undefined || msg.id === null) continue // a notification
    const id = msg.id
    const done = answer(msg).then(
      result => options.output(JSON.stringify({ jsonrpc: '2.0', id, result })),
      (error: Error & { rpcCode?: number }) => options.output(JSON.stringify({ jsonrpc: '2.0', id, error: { code: error.rpcCode ?? -32603, message: error.message } })),
    ).finally(() => inFlight.delete(done))
    inFlight.add(done)
  }
  await Promise.all(inFlight)
}
