import { runCommand, describeExit, capText } from 'dsh-common'
import type { ToolDefinition } from 'dsh-tools'
import type { Config } from './index.ts'

interface BashArgs {
  command: string
  timeout_ms?: number
}

/** Environment variables the harness holds that a model-run command must not see. */
const HIDDEN_ENV = ['DSH_API_KEY', 'DEEPSEEK_API_KEY'] as const

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
        // The harness's model credentials are not the agent's to read.
        env: Object.fromEntries(HIDDEN_ENV.map(name => [name, undefined])),
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
