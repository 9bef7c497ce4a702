import { afterEach, describe, expect, it } from 'vitest'
import { SYSTEM_FIRST_ERROR, textStream } from 'dsh-llm-openai/test-server'
import { cleanUp, collect, harness, server } from './helpers.ts'

afterEach(cleanUp)

describe('a server whose chat template wants the system message first (vLLM, llama.cpp)', () => {
  it('the test server rejects a later system message the way vLLM does', async () => {
    const s = await server([{ stream: textStream('unused') }], { template: 'system-first' })
    const error = await collect({ baseUrl: s.baseUrl, model: 'test-model' }, [{ role: 'user', content: 'hi' }, { role: 'system', content: 'late' }]).then(() => undefined, (e: Error) => e)
    expect(error?.message).toBe(`${s.baseUrl}/chat/completions rejected the request (HTTP 400: ${SYSTEM_FIRST_ERROR})`)
  })

  it('harness notices mid-conversation reach it as marked user messages, and the turn completes', async () => {
    const s = await server([{ stream: textStream('one') }, { stream: textStream('two') }], { template: 'system-first' })
    const h = await harness(s.baseUrl)
    expect(await h.agent.send('first')).toBe('completed')
    h.session.append('context/message', { source: 'proofchain', text: 'Proofs: none yet.' })
    expect(await h.agent.send('second')).toBe('completed')
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.body!.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: '[harness: proofchain] Proofs: none yet.\n\nsecond' },
    ])
  })
})
