/**
 * A variable name that looks like a credential: a `…KEY` at the end
 * (`OPENAI_API_KEY`, `AWS_ACCESS_KEY`), or a `TOKEN`, `SECRET`, `PASSWORD`,
 * `PASSWD`, `PASS`, `CREDENTIAL(S)` or `AUTH` word (`GITHUB_TOKEN`,
 * `AWS_SECRET_ACCESS_KEY`, `NPM_CONFIG__AUTH`, `SSH_AUTH_SOCK`).
 * Case-insensitive; words are separated by `_`.
 */
export function isCredentialName(name: string): boolean {
  const n = name.toUpperCase()
  return /KEY$/.test(n) || /(?:^|_)(?:[A-Z0-9]*TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(?:_|$)/.test(n)
}

/** The variables of `env` a model-run command must not see: every credential-looking one not in `allow`. */
export function hiddenEnv(env: NodeJS.ProcessEnv, allow: readonly string[] = []): string[] {
  const allowed = new Set(allow)
  return Object.keys(env).filter(name => isCredentialName(name) && !allowed.has(name))
}

/**
 * Environment overrides for a child process (`runCommand`'s or
 * `startProcess`'s `env`): `extra`, and every credential-looking variable of
 * this process not in `allow` removed — what a model-run command, a check
 * or a test run must not see. A name `extra` sets is kept as set.
 */
export function withoutCredentials(extra: Record<string, string | undefined> = {}, allow: readonly string[] = []): Record<string, string | undefined> {
  const env = { ...extra }
  for (const name of hiddenEnv(process.env, allow)) if (!(name in extra)) env[name] = undefined
  return env
}

/** Shorter values are not masked: `1`, `true` or a port would blot out ordinary text. */
const MIN_MASKED_LENGTH = 8

interface Masker {
  /** The environment it was built from (rebuilt when a variable changes). */
  signature: string
  secrets: { name: string; value: string }[]
}

let cached: Masker | undefined

function maskerFor(env: NodeJS.ProcessEnv): Masker {
  const secrets: { name: string; value: string }[] = []
  for (const name of Object.keys(env)) {
    const value = env[name]
    if (value && value.length >= MIN_MASKED_LENGTH && isCredentialName(name) && name !== 'SSH_AUTH_SOCK') secrets.push({ name, value })
  }
  // Longest first, so a value containing another is masked whole.
  secrets.sort((a, b) => b.value.length - a.value.length)
  const signature = secrets.map(s => `${s.name}=${s.value}`).join('\0')
  if (cached?.signature === signature) return cached
  cached = { signature, secrets }
  return cached
}

/**
 * `text` with the value of every credential-looking variable of `env` (at
 * least 8 characters long) replaced by `[redacted NAME]`, so a command that
 * prints a key — from a file, another process's `/proc/<pid>/environ`, a
 * test's output — never shows it to the model or writes it to a log. Only
 * exact values are found: an encoded or split value is not.
 */
export function maskCredentials(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const { secrets } = maskerFor(env)
  let out = text
  for (const { name, value } of secrets) if (out.includes(value)) out = out.split(value).join(`[redacted ${name}]`)
  return out
}

/** `value` with {@link maskCredentials} applied to every string inside it (objects and arrays copied only where something changed). */
export function maskCredentialsDeep<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  if (!maskerFor(env).secrets.length) return value
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskCredentials(v, env)
    if (Array.isArray(v)) {
      const next = v.map(walk)
      return next.some((item, i) => item !== v[i]) ? next : v
    }
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      let changed = false
      const next: Record<string, unknown> = {}
      for (const [k, item] of Object.entries(v)) {
        next[k] = walk(item)
        if (next[k] !== item) changed = true
      }
      return changed ? next : v
    }
    return v
  }
  return walk(value) as T
}
