import { describe, expect, it } from 'vitest'
import LlmService from 'dsh-llm'
import * as OpenAI from 'dsh-llm-openai'
import { Config, createOpenAIAdapter, OpenAIError, type OpenAIAdapter } from 'dsh-llm-openai'
import { harness, listenerCounts } from 'dsh-testkit'

describe('plugin lifecycle', () => {
  it('registers one adapter while loaded; disposing (twice) removes it and leaves no listener behind', async () => {
    const { ctx, load, dispose } = await harness({ workspaceTools: false, plugins: [LlmService] })
    const before = listenerCounts(ctx)
    const fiber = await load([OpenAI, Config({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' })])
    const adapter = ctx.llm.current as OpenAIAdapter
    expect([adapter.name, adapter.url, adapter.model]).toEqual(['openai', 'http://127.0.0.1:9/v1/chat/completions', 'm'])
    await fiber.dispose()
    await fiber.dispose()
    expect(ctx.llm.current).toBeUndefined()
    expect(listenerCounts(ctx)).toEqual(before)
    await dispose()
  })

  it('config defaults are DeepSeek\'s endpoint and model', () => {
    expect(Config({})).toEqual({
      baseUrl: 'https://api.deepseek.com', model: 'deepseek-chat', timeoutMs: 120_000, maxRetries: 3, retryDelayMs: 1000, maxRetryDelayMs: 20_000, maxRetryWaitMs: 120_000, includeUsage: true,
    })
  })

  it('a base URL that is not http(s) is refused when the adapter is made', () => {
    expect(() => createOpenAIAdapter(Config({ baseUrl: 'api.example.com/v1', model: 'm' }))).toThrow(new OpenAIError('baseUrl is not an http(s) URL: "api.example.com/v1"', 'config'))
    let caught: unknown
    try {
      createOpenAIAdapter(Config({ baseUrl: 'ftp://x', model: 'm' }))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(OpenAIError)
    expect([(caught as OpenAIError).code, (caught as OpenAIError).kind]).toEqual(['LLM_OPENAI', 'config'])
  })
})
