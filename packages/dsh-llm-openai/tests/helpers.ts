import type { Session } from 'dsh-session'
import type { ModelChunk, ModelMessage } from 'dsh-llm'
import * as OpenAI from 'dsh-llm-openai'
import { startProtocolServer, type ProtocolServer, type ProtocolServerOptions, type Reply, type RecordedRequest } from 'dsh-llm-openai/test-server'
import { harness as core, type Harness } from 'dsh-testkit'

/** What `Config()` takes: the options a test sets, the schema fills in the rest. */
type ConfigInput = Parameters<typeof OpenAI.Config>[0]

/** Test settings: a key, fast retries and a short silence limit, so failure tests stay quick. */
const testConfig = (config: ConfigInput) => OpenAI.Config({ apiKey: 'test-key', retryDelayMs: 5, maxRetryDelayMs: 40, timeoutMs: 5000, ...config })

const open: { close(): Promise<void> }[] = []

/** Close every protocol server and dispose every harness a test opened (`afterEach(cleanUp)`). */
export async function cleanUp() {
  await Promise.all(open.splice(0).map(o => o.close()))
}

/** A protocol server on 127.0.0.1, closed by {@link cleanUp}. */
export async function server(replies: Reply[] | ((request: RecordedRequest, index: number) => Reply), options?: ProtocolServerOptions): Promise<ProtocolServer> {
  const s = await startProtocolServer(replies, options)
  open.push(s)
  return s
}

/**
 * The kit's real harness with this adapter as the model, pointed at
 * `baseUrl` (model `test-model`, test settings), disposed by {@link cleanUp};
 * `retries` collects `llm/retry`.
 */
export async function harness(baseUrl: string, config: ConfigInput = {}) {
  const h: Harness = await core({
    model: [OpenAI, testConfig({ baseUrl, model: 'test-model', ...config })],
    agent: { maxSteps: 10, systemPrompt: 'You are a test.' },
  })
  open.push({ close: h.dispose })
  const retries: OpenAI.RetryInfo[] = []
  h.ctx.on('llm/retry', info => { retries.push(info) })
  return Object.assign(h, {
    retries,
    errors: () => h.session.ofType('error').map(e => e.data.message),
    reasons: () => h.session.ofType('turn/end').map(e => e.data.reason),
  })
}

/** Stream one request straight through an adapter (no loop) and collect the chunks. */
export async function collect(config: ConfigInput, messages: ModelMessage[] = [{ role: 'user', content: 'hi' }], signal = new AbortController().signal): Promise<ModelChunk[]> {
  const adapter = OpenAI.createOpenAIAdapter(testConfig(config))
  const out: ModelChunk[] = []
  const session = { id: 'direct' } as Session
  for await (const c of adapter.stream({ session, messages, tools: [], requestIndex: 0 }, signal)) out.push(c)
  return out
}

/** The error an adapter stream throws (fails the test if it does not throw). */
export async function failure(config: ConfigInput): Promise<OpenAI.OpenAIError> {
  try {
    await collect(config)
  } catch (error) {
    return error as OpenAI.OpenAIError
  }
  throw new Error('expected the stream to fail')
}
