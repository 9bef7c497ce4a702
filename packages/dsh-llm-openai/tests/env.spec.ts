import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'
import { describe, expect, it } from 'vitest'
import { entryListSchema } from '@deepseek-ai/cordis-plugin-include'
import { interpolate } from '@deepseek-ai/cordis-plugin-loader'
import { Config, resolveModelEnv } from 'dsh-llm-openai'

const here = dirname(fileURLToPath(import.meta.url))
const DS = 'https://api.deepseek.com'

describe('resolveModelEnv', () => {
  it('follows the documented rules', () => {
    const cases: [Record<string, string>, ReturnType<typeof resolveModelEnv>][] = [
      [{ DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-chat', apiKey: 'ds', keyFrom: 'DEEPSEEK_API_KEY' }],
      [{ DSH_API_KEY: 'k', DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-chat', apiKey: 'k', keyFrom: 'DSH_API_KEY' }],
      [{ DSH_MODEL: 'deepseek-reasoner', DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-reasoner', apiKey: 'ds', keyFrom: 'DEEPSEEK_API_KEY' }],
      // A DeepSeek key is never sent to another server.
      [{ DSH_BASE_URL: 'https://api.openai.com/v1', DSH_MODEL: 'gpt-4o-mini', DEEPSEEK_API_KEY: 'ds' }, {
        baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini',
        problem: 'no API key for https://api.openai.com/v1: set DSH_API_KEY (or DSH_API_KEY= with an empty value if the server needs none)',
      }],
      [{ DSH_BASE_URL: 'https://api.openai.com/v1', DSH_API_KEY: 'sk' }, { baseUrl: 'https://api.openai.com/v1', model: 'deepseek-chat', apiKey: 'sk', keyFrom: 'DSH_API_KEY' }],
      // A local server needs no key; an explicitly empty key means "none needed".
      [{ DSH_BASE_URL: 'http://127.0.0.1:11434/v1', DSH_MODEL: 'qwen2.5-coder' }, { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5-coder' }],
      [{ DSH_BASE_URL: 'http://localhost:8080/v1' }, { baseUrl: 'http://localhost:8080/v1', model: 'deepseek-chat' }],
      [{ DSH_BASE_URL: 'http://gpu-box:8000/v1', DSH_API_KEY: '' }, { baseUrl: 'http://gpu-box:8000/v1', model: 'deepseek-chat' }],
      [{}, {
        baseUrl: DS, model: 'deepseek-chat',
        problem: 'no API key: set DEEPSEEK_API_KEY (or DSH_API_KEY) for DeepSeek, or DSH_BASE_URL, DSH_MODEL and DSH_API_KEY (or OPENAI_BASE_URL and OPENAI_API_KEY) for another OpenAI-compatible server',
      }],
      [{ DSH_BASE_URL: '', DSH_MODEL: '', DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-chat', apiKey: 'ds', keyFrom: 'DEEPSEEK_API_KEY' }],
      [{ DSH_BASE_URL: 'api.openai.com/v1', DSH_API_KEY: 'sk' }, {
        baseUrl: 'api.openai.com/v1', model: 'deepseek-chat', apiKey: 'sk', keyFrom: 'DSH_API_KEY',
        problem: 'DSH_BASE_URL is not an http(s) URL: "api.openai.com/v1" (e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1)',
      }],
      // The OpenAI pair: only as a pair, after DSH_*; a key only goes to the server it was set for.
      [{ OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk', DEEPSEEK_API_KEY: 'ds' }, {
        baseUrl: 'https://api.openai.com/v1', model: 'deepseek-chat', apiKey: 'sk', keyFrom: 'OPENAI_API_KEY',
      }],
      [{ OPENAI_API_KEY: 'sk', DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-chat', apiKey: 'ds', keyFrom: 'DEEPSEEK_API_KEY' }],
      [{ OPENAI_BASE_URL: 'https://api.openai.com/v1', DEEPSEEK_API_KEY: 'ds' }, { baseUrl: DS, model: 'deepseek-chat', apiKey: 'ds', keyFrom: 'DEEPSEEK_API_KEY' }],
      [{ OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk', DSH_API_KEY: 'k' }, {
        baseUrl: 'https://api.openai.com/v1', model: 'deepseek-chat', apiKey: 'k', keyFrom: 'DSH_API_KEY',
      }],
      [{ DSH_BASE_URL: 'http://gpu-box:8000/v1', OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk' }, {
        baseUrl: 'http://gpu-box:8000/v1', model: 'deepseek-chat',
        problem: 'no API key for http://gpu-box:8000/v1: set DSH_API_KEY (or DSH_API_KEY= with an empty value if the server needs none)',
      }],
      [{ OPENAI_BASE_URL: 'api.openai.com', OPENAI_API_KEY: 'sk' }, {
        baseUrl: 'api.openai.com', model: 'deepseek-chat', apiKey: 'sk', keyFrom: 'OPENAI_API_KEY',
        problem: 'OPENAI_BASE_URL is not an http(s) URL: "api.openai.com" (e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1)',
      }],
    ]
    for (const [env, expected] of cases) expect(resolveModelEnv(env), JSON.stringify(env)).toEqual(expected)
  })
})

/** The dsh-llm-openai entry of a cordis.yml text, config evaluated the way the loader does for `env`. */
function evaluateEntry(text: string, env: Record<string, string>) {
  const entries = yaml.load(text, { schema: entryListSchema }) as { name: string; config?: object }[]
  const entry = entries.find(e => e.name === 'dsh-llm-openai')
  if (!entry?.config) return undefined
  const config = Config(interpolate({ process: { env } }, entry.config))
  return { baseUrl: config.baseUrl, model: config.model, apiKey: config.apiKey }
}

const envs: Record<string, string>[] = [
  {}, { DEEPSEEK_API_KEY: 'ds' }, { DSH_API_KEY: 'k', DEEPSEEK_API_KEY: 'ds' }, { DSH_API_KEY: '', DEEPSEEK_API_KEY: 'ds' },
  { DSH_BASE_URL: 'https://api.openai.com/v1', DSH_MODEL: 'gpt-4o-mini', DEEPSEEK_API_KEY: 'ds' },
  { DSH_BASE_URL: 'https://api.openai.com/v1', DSH_API_KEY: 'sk' }, { DSH_BASE_URL: 'http://127.0.0.1:8080/v1' },
  { DSH_BASE_URL: '', DSH_MODEL: '', DEEPSEEK_API_KEY: 'ds' },
  { OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk', DEEPSEEK_API_KEY: 'ds' },
  { OPENAI_API_KEY: 'sk', DEEPSEEK_API_KEY: 'ds' }, { OPENAI_BASE_URL: 'https://api.openai.com/v1', DEEPSEEK_API_KEY: 'ds' },
  { OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk', DSH_API_KEY: 'k' },
  { OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk', DSH_API_KEY: '' },
  { DSH_BASE_URL: 'http://127.0.0.1:8080/v1', OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk' },
]

describe('the cordis.yml entry reads the environment the same way', () => {
  const readme = readFileSync(join(here, '../README.md'), 'utf8')
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map(m => m[1]!).find(b => b.includes('name: dsh-llm-openai'))!

  it('the README entry', () => {
    for (const env of envs) {
      const { baseUrl, model, apiKey } = resolveModelEnv(env)
      expect(evaluateEntry(block, env), JSON.stringify(env)).toEqual({ baseUrl, model, apiKey })
    }
  })

  const root = readFileSync(join(here, '../../../cordis.yml'), 'utf8')
  it('the repo cordis.yml entry', () => {
    for (const env of envs) {
      const { baseUrl, model, apiKey } = resolveModelEnv(env)
      expect(evaluateEntry(root, env), JSON.stringify(env)).toEqual({ baseUrl, model, apiKey })
    }
  })
})
