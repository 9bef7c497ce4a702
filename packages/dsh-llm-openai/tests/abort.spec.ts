import { afterEach, describe, expect, it } from 'vitest'
import type { Session } from 'dsh-session'
import { Config, createOpenAIAdapter } from 'dsh-llm-openai'
import { textStream } from 'dsh-llm-openai/test-server'
import { cleanUp, harness, server } from './helpers.ts'

afterEach(cleanUp)

describe('abort', () => {
  it('abort mid-stream ends the turn with reason aborted, no error, and closes the connection', async () => {
    const s = await server([{ stream: textStream('this answer never ends', 5).slice(0, 3), hang: true }])
    const h = await harness(s.baseUrl)
    h.ctx.on('session/event', (_session, event) => {
      if (event.type === 'assistant/chunk') h.agent.abort()
    })
    expect(await h.agent.send('go')).toBe('aborted')
    expect(h.reasons()).toEqual(['aborted'])
    expect(h.errors()).toEqual([])
    expect(h.session.ofType('assistant/chunk').map(e => e.data.text)).toEqual(['this '])
    await s.waitForClientAborts(1)
    expect(s.requests).toHaveLength(1)
  })

  it('abort during a retry wait stops at once', { timeout: 5000 }, async () => {
    const s = await server([{ status: 429, json: { error: { message: 'slow down' } }, headers: { 'retry-after': '30' } }])
    const h = await harness(s.baseUrl, { maxRetryDelayMs: 60_000 })
    h.ctx.on('llm/retry', () => h.agent.abort())
    expect(await h.agent.send('go')).toBe('aborted')
    expect(h.retries.map(r => r.delayMs)).toEqual([30_000])
    expect(s.requests).toHaveLength(1)
  })

  it('a consumer that stops reading early releases the connection', async () => {
    const s = await server([{ stream: textStream('a b c d e f', 2), hang: true }])
    const adapter = createOpenAIAdapter(Config({ baseUrl: s.baseUrl, model: 'm' }))
    const stream = adapter.stream({ session: { id: 'x' } as Session, messages: [], tools: [], requestIndex: 0 }, new AbortController().signal)
    for await (const chunk of stream) {
      expect(chunk).toEqual({ type: 'text', text: 'a ' })
      break
    }
    await s.waitForClientAborts(1)
  })
})
