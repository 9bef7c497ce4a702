import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import LlmService from 'dsh-llm'
import * as OpenAI from 'dsh-llm-openai'
import { createOpenAIAdapter, OpenAIError, type OpenAIAdapter } from 'dsh-llm-openai'
import { closeServers } from './helpers.ts'

afterEach(closeServers)

describe('plugin lifecycle', () => {
  it('registers one adapter while loaded; disposing (twice) removes it and leaves no listener behind', async () => {
    const ctx = new Context()
    await ctx.plugin(LlmService)
    await new Promise(r => setTimeout(r, 0))
    const hooks = () => Object.fromEntries(Object.entries((ctx.events as unknown as { _hooks: Record<string, unknown[]> })._hooks).map(([k, v]) => [k, v.length]))
    const before = hooks()
    const fiber = await ctx.plugin(OpenAI, { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' })
    await new Promise(r => setTimeout(r, 0))
    const adapter = ctx.llm.current as OpenAIAdapter
    expect([adapter.name, adapter.url, adapter.model]).toEqual(['openai', 'http://127.0.0.1:9/v1/chat/completions', 'm'])
    await fiber.dispose()
    await fiber.dispose()
    expect(ctx.llm.current).toBeUndefined()
    expect(hooks()).toEqual(before)
  })

  it('config defaults are DeepSeek\'s endpoint and model', () => {
    expect(OpenAI.Config({})).toEqual({
      baseUrl: 'https://api.deepseek.com', model: 'deepseek-chat', timeoutMs: 120_000, maxRetries: 3, retryDelayMs: 1000, maxRetryDelayMs: 20_000, maxRetryWaitMs: 120_000, includeUsage: true,
    })
  })

  it('a base URL that is not http(s) is refused when the adapter is made', () => {
    expect(() => createOpenAIAdapter({ baseUrl: 'api.example.com/v1', model: 'm' })).toThrow(new OpenAIError('baseUrl is not an http(s) URL: "api.example.com/v1"', 'config'))
    let caught: unknown
    try {
      createOpenAIAdapter({ baseUrl: 'ftp://x', model: 'm' })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(OpenAIError)
    expect([(caught as OpenAIError).code, (caught as OpenAIError).kind]).toEqual(['LLM_OPENAI', 'config'])
  })
})
