/** DeepSeek's public endpoint: the default when `DSH_BASE_URL` is not set. */
export const DEEPSEEK_BASE_URL = 'https://api.deepseek.com'
/** The default model when `DSH_MODEL` is not set. */
export const DEEPSEEK_MODEL = 'deepseek-chat'

/** The model settings an environment asks for. */
export interface ModelEnv {
  baseUrl: string
  model: string
  /** The key to send, if any. */
  apiKey?: string
  /** The variable the key came from. */
  keyFrom?: 'DSH_API_KEY' | 'OPENAI_API_KEY' | 'DEEPSEEK_API_KEY'
  /**
   * Set when these settings cannot work (no key for a server that needs
   * one, a base URL that is not http(s)): one line saying how to fix it.
   */
  problem?: string
}

const LOOPBACK = /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)$/i

/** True for a URL on this machine (a local server needs no key). */
export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK.test(new URL(url).hostname)
  } catch {
    return false
  }
}

/**
 * The effective model settings from an environment (pure; pass `process.env`):
 *
 * - base URL: `DSH_BASE_URL`, else `OPENAI_BASE_URL` when `OPENAI_API_KEY`
 *   is set too (the pair every OpenAI-compatible client reads), else
 *   DeepSeek's public endpoint;
 * - model: `DSH_MODEL`, else `deepseek-chat`;
 * - key: `DSH_API_KEY` (set but empty = "this server needs no key"), else
 *   `OPENAI_API_KEY` — only while the base URL came from the pair, else
 *   `DEEPSEEK_API_KEY` — only while the base URL is DeepSeek's default. So a
 *   key is only ever sent to the server it was set for; half a pair (only
 *   `OPENAI_API_KEY` or only `OPENAI_BASE_URL`) is ignored.
 *
 * A missing key is a `problem` unless the server is on this machine.
 * The default cordis.yml computes the same with `!!js` expressions.
 *
 * @example
 * const m = resolveModelEnv(process.env)
 * if (m.problem) { console.error(m.problem); process.exit(2) }
 */
export function resolveModelEnv(env: Readonly<Record<string, string | undefined>>): ModelEnv {
  const pair = !env.DSH_BASE_URL && env.OPENAI_BASE_URL && env.OPENAI_API_KEY ? env.OPENAI_BASE_URL : undefined
  const custom = env.DSH_BASE_URL || pair
  const baseUrl = custom ?? DEEPSEEK_BASE_URL
  const model = env.DSH_MODEL || DEEPSEEK_MODEL
  const out: ModelEnv = { baseUrl, model }
  if (env.DSH_API_KEY !== undefined) {
    if (env.DSH_API_KEY) Object.assign(out, { apiKey: env.DSH_API_KEY, keyFrom: 'DSH_API_KEY' })
  } else if (pair) {
    Object.assign(out, { apiKey: env.OPENAI_API_KEY, keyFrom: 'OPENAI_API_KEY' })
  } else if (!custom && env.DEEPSEEK_API_KEY) {
    Object.assign(out, { apiKey: env.DEEPSEEK_API_KEY, keyFrom: 'DEEPSEEK_API_KEY' })
  }
  if (!/^https?:\/\/[^/]/i.test(baseUrl) || !URL.canParse(baseUrl)) {
    out.problem = `${pair ? 'OPENAI_BASE_URL' : 'DSH_BASE_URL'} is not an http(s) URL: ${JSON.stringify(baseUrl)} (e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1)`
  } else if (!out.apiKey && env.DSH_API_KEY === undefined && !isLoopbackUrl(baseUrl)) {
    out.problem = custom
      ? `no API key for ${baseUrl}: set DSH_API_KEY (or DSH_API_KEY= with an empty value if the server needs none)`
      : 'no API key: set DEEPSEEK_API_KEY (or DSH_API_KEY) for DeepSeek, or DSH_BASE_URL, DSH_MODEL and DSH_API_KEY (or OPENAI_BASE_URL and OPENAI_API_KEY) for another OpenAI-compatible server'
  }
  return out
}
