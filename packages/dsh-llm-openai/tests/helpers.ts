import { Context } from '@deepseek-ai/cordis'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SessionService, { type Session } from 'dsh-session'
import ToolService from 'dsh-tools'
import * as WorkspaceTools from 'dsh-tools-workspace'
import LlmService, { type ModelChunk, type ModelMessage } from 'dsh-llm'
import AgentService from 'dsh-agent'
import * as OpenAI from 'dsh-llm-openai'
import { createOpenAIAdapter, type OpenAIAdapterOptions, type RetryInfo } from 'dsh-llm-openai'
import { startProtocolServer, type ProtocolServer, type ProtocolServerOptions, type Reply, type RecordedRequest } from 'dsh-llm-openai/test-server'

export function tempDir(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'dsh-openai-')))
}

/** Fast retries and a short silence limit, so failure tests stay quick. */
export const fastRetries = { retryDelayMs: 5, maxRetryDelayMs: 40, timeoutMs: 5000 }

const servers: ProtocolServer[] = []

/** A protocol server on 127.0.0.1, closed by {@link closeServers}. */
export async function server(replies: Reply[] | ((request: RecordedRequest, index: number) => Reply), options?: ProtocolServerOptions): Promise<ProtocolServer> {
  const s = await startProtocolServer(replies, options)
  servers.push(s)
  return s
}

export async function closeServers() {
  await Promise.all(servers.splice(0).map(s => s.close()))
}

/**
 * A real harness in one Context: sessions, tools, workspace tools, the llm
 * service, this adapter pointed at `baseUrl`, and the agent loop.
 */
export async function harness(baseUrl: string, config: Partial<OpenAI.Config> = {}) {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(ToolService)
  await ctx.plugin(WorkspaceTools, {})
  await ctx.plugin(LlmService)
  const fiber = await ctx.plugin(OpenAI, { baseUrl, model: 'test-model', apiKey: 'test-key', ...fastRetries, ...config })
  await ctx.plugin(AgentService, { maxSteps: 10, systemPrompt: 'You are a test.' })
  await new Promise(r => setTimeout(r, 0))
  const ws = tempDir()
  const session = ctx.sessions.create(undefined, { cwd: ws })
  const agent = ctx.agents.create(session)
  const retries: RetryInfo[] = []
  ctx.on('llm/retry', info => { retries.push(info) })
  return {
    ctx, ws, session, agent, fiber, retries,
    types: () => session.events.map(e => e.type),
    errors: () => session.ofType('error').map(e => e.data.message),
    reasons: () => session.ofType('turn/end').map(e => e.data.reason),
  }
}

/** Stream one request straight through an adapter (no loop) and collect the chunks. */
export async function collect(options: OpenAIAdapterOptions, messages: ModelMessage[] = [{ role: 'user', content: 'hi' }], signal = new AbortController().signal): Promise<ModelChunk[]> {
  const adapter = createOpenAIAdapter({ apiKey: 'test-key', ...fastRetries, ...options })
  const out: ModelChunk[] = []
  const session = { id: 'direct' } as Session
  for await (const c of adapter.stream({ session, messages, tools: [], requestIndex: 0 }, signal)) out.push(c)
  return out
}

/** The error an adapter stream throws (fails the test if it does not throw). */
export async function failure(options: OpenAIAdapterOptions): Promise<OpenAI.OpenAIError> {
  try {
    await collect(options)
  } catch (error) {
    return error as OpenAI.OpenAIError
  }
  throw new Error('expected the stream to fail')
}
