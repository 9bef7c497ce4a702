import { runCommand, describeExit, capText } from 'dsh-common'
import type { ToolDefinition } from 'dsh-tools'
import type { Config } from './config.ts'

interface BashArgs {
  command: string
  timeout_ms?: number
}

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
export function hiddenEnv(env: NodeJS.ProcessEnv, allow: readonly string[]): string[] {
  const allowed = new Set(allow)
  return Object.keys(env).filter(name => isCredentialName(name) && !allowed.has(name))
}

/** `bash`: runs in the workspace, own process group, timeout kills the whole tree, output capped. */
export function createBashTool(config: Config): ToolDefinition<BashArgs> {
  return {
    name: 'bash',
    description: 'Run a shell command in the workspace root. Returns combined output and the exit code.',
    effects: 'shell',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        timeout_ms: { type: 'integer', minimum: 1, description: `Default ${config.bashTimeoutMs}.` },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async execute(args, exec) {
      const timeoutMs = args.timeout_ms ?? config.bashTimeoutMs
      const r = await runCommand(['bash', '-c', args.command], {
        cwd: exec.session.cwd,
        timeoutMs,
        maxOutputBytes: config.bashMaxOutputBytes,
        signal: exec.signal,
        // Credentials (the harness's model key, the user's tokens) are not the agent's to read.
        env: Object.fromEntries(hiddenEnv(process.env, config.bashEnvAllow).map(name => [name, undefined])),
      })
      let output = r.output
      if (r.truncatedBytes) output += `\n[… ${r.truncatedBytes} bytes truncated]`
      const status = r.exitCode === null || r.spawnError ? describeExit(r, timeoutMs) : `exit code ${r.exitCode}`
      return {
        content: capText(`${output}${output && !output.endsWith('\n') ? '\n' : ''}[${status}]`, config.bashMaxOutputBytes + 200),
        isError: r.exitCode !== 0,
        exitCode: r.spawnError ? null : r.exitCode,
      }
    },
  }
}
