import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { chunk, textStream, usageChunk } from 'dsh-llm-openai/test-server'
import { cleanUp, failure, harness, server } from './helpers.ts'

afterEach(cleanUp)

async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>(r => probe.listen(0, '127.0.0.1', r))
  const { port } = probe.address() as { port: number }
  await new Promise(r => probe.close(r))
  return port
}

describe('retries before the first token', () => {
  it('a 429 then success: waits what Retry-After asks, announces llm/retry, and the turn completes', async () => {
    const s = await server([
      { status: 429, json: { error: { message: 'Rate limit reached', type: 'rate_limit' } }, headers: { 'retry-after': '0' } },
      { stream: [...textStream('made it'), usageChunk(1, 2)] },
    ])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('completed')
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.body).toEqual(s.requests[0]!.body)
    expect(h.retries).toEqual([{
      sessionId: h.session.id, requestIndex: 0, attempt: 1, maxAttempts: 4, delayMs: 0, status: 429,
      reason: `${s.baseUrl} is rate limiting requests (HTTP 429: Rate limit reached)`,
    }])
    expect(h.errors()).toEqual([])
    expect(h.session.ofType('assistant/message').map(e => e.data.text)).toEqual(['made it'])
  })

  it('5xx answers are retried with growing backoff, then the turn ends with an error naming the last answer', async () => {
    const s = await server(Array.from({ length: 4 }, () => ({ status: 503, text: 'upstream overloaded' })))
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('error')
    expect(s.requests).toHaveLength(4)
    expect(h.errors()).toEqual([`${s.baseUrl}/chat/completions answered HTTP 503: upstream overloaded; gave up after 4 attempts`])
    expect(h.retries.map(r => r.attempt)).toEqual([1, 2, 3])
    // 5 ms doubling, ±25 % jitter, capped at 40 ms.
    h.retries.forEach((r, i) => {
      const base = Math.min(40, 5 * 2 ** i)
      expect(r.delayMs).toBeGreaterThanOrEqual(Math.floor(base * 0.75))
      expect(r.delayMs).toBeLessThanOrEqual(Math.min(40, Math.ceil(base * 1.25)))
    })
  })

  it('a Retry-After longer than maxRetryDelayMs is honoured in full, within maxRetryWaitMs', async () => {
    const s = await server([
      { status: 429, json: { error: { message: 'slow down' } }, headers: { 'retry-after-ms': '200' } },
      { stream: textStream('waited') },
    ])
    const h = await harness(s.baseUrl, { maxRetryDelayMs: 40, maxRetryWaitMs: 1000 })
    expect(await h.agent.send('go')).toBe('completed')
    expect(h.retries.map(r => r.delayMs)).toEqual([200])
    expect(s.requests).toHaveLength(2)
  })

  it('a Retry-After past the maxRetryWaitMs budget fails at once, saying how long the server asked to wait', async () => {
    const s = await server([
      { status: 429, json: { error: { message: 'slow down' } }, headers: { 'retry-after-ms': '100' } },
      { status: 429, json: { error: { message: 'slow down' } }, headers: { 'retry-after': '30' } },
    ])
    const h = await harness(s.baseUrl, { maxRetryWaitMs: 5000 })
    expect(await h.agent.send('go')).toBe('error')
    expect(s.requests).toHaveLength(2)
    expect(h.errors()).toEqual([`${s.baseUrl} is rate limiting requests (HTTP 429: slow down); the server asked to wait 30 s before retrying, more than the 5 s retry budget allows (maxRetryWaitMs, 100 ms already waited)`])
  })

  it('every request carries the User-Agent; an error names the request id the server gave', async () => {
    const s = await server([
      { status: 400, json: { error: { message: 'bad tools' } }, headers: { 'x-request-id': 'req_abc123' } },
      { status: 400, json: { error: { message: 'bad tools' } }, headers: { 'request-id': 'req_def456' } },
    ])
    const a = await failure({ baseUrl: s.baseUrl, model: 'm' })
    const b = await failure({ baseUrl: s.baseUrl, model: 'm' })
    expect(s.requests.map(r => r.headers['user-agent'])).toEqual(['dsh/0.1.0 (dsh-llm-openai)', 'dsh/0.1.0 (dsh-llm-openai)'])
    expect([a.message, b.message]).toEqual([
      `${s.baseUrl}/chat/completions rejected the request (HTTP 400: bad tools; request id req_abc123)`,
      `${s.baseUrl}/chat/completions rejected the request (HTTP 400: bad tools; request id req_def456)`,
    ])
  })

  it('a connection reset before any answer is retried', async () => {
    const s = await server([{ reset: true }, { stream: textStream('second try') }])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('completed')
    expect(s.requests).toHaveLength(2)
    expect(h.retries.map(r => r.reason)).toEqual([`cannot connect to ${s.baseUrl}/chat/completions (connection reset)`])
  })

  it('silence longer than timeoutMs fails the attempt; it is retried, then given up', async () => {
    const s = await server([{ stream: [], hang: true }, { stream: [], hang: true }])
    const e = await failure({ baseUrl: s.baseUrl, model: 'm', timeoutMs: 150, maxRetries: 1 })
    expect(e.message).toBe(`no data from ${s.baseUrl}/chat/completions for 150 ms (timeoutMs); gave up after 2 attempts`)
    expect(e.kind).toBe('timeout')
    await s.waitForClientAborts(2)
  })
})

describe('failures end the turn with a clear error, never the process', () => {
  it('a disconnect mid-stream: the text so far stays logged, the turn errors, and nothing is retried', async () => {
    const s = await server([{ stream: textStream('partial answer here', 4), cutAfter: 3 }, { stream: textStream('must not be asked') }])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('error')
    expect(s.requests).toHaveLength(1)
    expect(h.session.ofType('assistant/chunk').map(e => e.data.text)).toEqual(['part', 'ial '])
    expect(h.errors()).toEqual([`connection to ${s.baseUrl}/chat/completions was lost mid-stream (other side closed); not retried because part of the answer had already arrived`])
    expect(h.types().slice(-3)).toEqual(['error', 'step/end', 'turn/end'])
    expect(h.retries).toEqual([])
  })

  it('a stream that ends cleanly but early (no finish_reason, no [DONE]) is an error too', async () => {
    const s = await server([{ stream: textStream('cut short').slice(0, 2), done: false }])
    const e = await failure({ baseUrl: s.baseUrl, model: 'm' })
    expect(e.message).toBe(`the stream from ${s.baseUrl}/chat/completions ended before the answer was complete (no finish_reason, no [DONE]); not retried because part of the answer had already arrived`)
    expect(s.requests).toHaveLength(1)
  })

  it('malformed SSE names the line that is not JSON', async () => {
    const s = await server([{ stream: [chunk({ content: 'ok' }), 'data: {"choices": [\n\n'] }])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('error')
    expect(h.errors()).toEqual([`malformed stream from ${s.baseUrl}/chat/completions: line 3 is not JSON: "{\\"choices\\": ["`])
    expect(s.requests).toHaveLength(1)
  })

  it('malformed deltas say what was wrong (arguments the model sent malformed go back to it: tool-arguments.spec.ts)', async () => {
    const cases: [object[], string | RegExp][] = [
      [[{ choices: { index: 0 } }], 'line 1: "choices" is not a list'],
      [[chunk({ tool_calls: { index: 0 } })], 'line 1: "tool_calls" is not a list'],
      [[chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')], 'tool call 0 has no function name'],
      [[chunk({ tool_calls: [{ index: 0, function: { arguments: '{"c' } }] }), chunk({}, 'length')], 'tool call 0 has no function name (the answer was cut off: finish_reason "length"; raise maxTokens)'],
    ]
    for (const [stream, expected] of cases) {
      const s = await server([{ stream }])
      const e = await failure({ baseUrl: s.baseUrl, model: 'm' })
      const prefix = `malformed stream from ${s.baseUrl}/chat/completions: `
      expect(e.message.startsWith(prefix), e.message).toBe(true)
      if (typeof expected === 'string') expect(e.message.slice(prefix.length)).toBe(expected)
      else expect(e.message.slice(prefix.length)).toMatch(expected)
      expect(e.kind).toBe('malformed')
    }
  })

  it('an error reported inside the stream ends the turn with the server\'s message', async () => {
    const s = await server([{ stream: [chunk({ content: 'hm' }), { error: { message: 'Internal error while generating', code: 500 } }] }])
    const e = await failure({ baseUrl: s.baseUrl, model: 'm' })
    expect(e.message).toBe(`${s.baseUrl}/chat/completions reported an error mid-stream: Internal error while generating`)
  })

  it('401: "API key rejected by <base URL>", not retried; the next turn works', async () => {
    const s = await server([
      { status: 401, json: { error: { message: 'Authentication Fails (no such user)', type: 'authentication_error' } } },
      { stream: textStream('back again') },
    ])
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('go')).toBe('error')
    expect(h.errors()).toEqual([`API key rejected by ${s.baseUrl} (HTTP 401: Authentication Fails (no such user))`])
    expect(s.requests).toHaveLength(1)
    expect(await h.agent.send('again')).toBe('completed')
    expect(h.reasons()).toEqual(['error', 'completed'])
  })

  it('401 without any key says to set one', async () => {
    const s = await server([{ status: 401, json: { error: { message: 'Missing bearer token' } } }])
    const e = await failure({ baseUrl: s.baseUrl, model: 'm', apiKey: undefined })
    expect(e.message).toBe(`${s.baseUrl} wants an API key and none is configured (HTTP 401: Missing bearer token): set DSH_API_KEY`)
  })

  it('connection refused names the URL and is not retried', async () => {
    const port = await closedPort()
    const h = await harness(`http://127.0.0.1:${port}/v1`)
    expect(await h.agent.send('go')).toBe('error')
    expect(h.errors()).toEqual([`cannot connect to http://127.0.0.1:${port}/v1/chat/completions (connection refused): is the server running?`])
    expect(h.retries).toEqual([])
  })

  it('a 404 hints at the base URL and the model', async () => {
    const s = await server([])
    const base = s.baseUrl.replace(/\/v1$/, '')
    const e = await failure({ baseUrl: base, model: 'gpt-x' })
    expect(e.message).toBe(`${base}/chat/completions answered HTTP 404: no route for POST /chat/completions (check the base URL, which usually ends in /v1, and the model "gpt-x")`)
  })
})
