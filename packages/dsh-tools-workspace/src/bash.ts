import { mkdirSync } from 'node:fs'
import { runCommand, describeExit, capText, ensureVault, isolationSupport, stateDir, withoutCredentials, type Isolation } from 'dsh-common'
import type { ToolDefinition } from 'dsh-tools'
import type { Config } from './config.ts'
import { guardVault } from './vault-guard.ts'

interface BashArgs {
  command: string
  timeout_ms?: number
}

/** Told once, the first time a command runs without namespaces, why and what that leaves open. */
export type IsolationNotice = (message: string) => void

/**
 * What a command may not touch: the vault read-only (dsh's records are the
 * harness's, not the agent's), dsh's key store hidden. Both are created
 * first: a mount needs its mount point, and a vault the agent could create
 * itself would be its to forge.
 */
function isolationFor(vault: string): Isolation {
  const isolation: { readOnly: string[]; hidden: string[] } = { readOnly: [], hidden: [] }
  try {
    ensureVault(vault)
    isolation.readOnly.push(vault)
  } catch {
    // A workspace that cannot hold a vault (read-only): there is nothing of dsh's in it to protect.
  }
  try {
    const keys = stateDir()
    mkdirSync(keys, { recursive: true, mode: 0o700 })
    isolation.hidden.push(keys)
  } catch {
    // No key store can be made (a read-only home): there is no key to hide, and no seal is written.
  }
  return isolation
}

/**
 * `bash`: runs in the workspace, isolated (fresh PID, mount and user
 * namespaces where the system allows: the vault read-only, the key store
 * and the harness's processes invisible, and every process the command
 * started ends with it); a timeout kills the whole tree; output capped.
 */
export function createBashTool(config: Config, notice: IsolationNotice = () => {}): ToolDefinition<BashArgs> {
  let noticed = false
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
      const support = isolationSupport()
      if (support.mode === 'none' && !noticed) {
        noticed = true
        notice(`bash commands run without namespaces here (${support.reason}): processes they start are still ended with each call (by an environment marker a process can clear), but they can read the environment of dsh and its parent processes through /proc and read dsh's key store; a change they make to the vault's proof chain or checkpoints is put back after the call. Credential values are still masked in what the model and the session log see.`)
      }
      const isolate = isolationFor(exec.session.vault)
      const guard = support.mode === 'none' ? guardVault(exec.session.vault) : undefined
      const r = await runCommand(['bash', '-c', args.command], {
        cwd: exec.session.cwd,
        timeoutMs,
        maxOutputBytes: config.bashMaxOutputBytes,
        signal: exec.signal,
        // Credentials (the harness's model key, the user's tokens) are not the agent's to read.
        env: withoutCredentials({}, config.bashEnvAllow),
        isolate,
      })
      let output = r.output
      if (r.truncatedBytes) output += `\n[… ${r.truncatedBytes} bytes truncated]`
      const status = r.exitCode === null || r.spawnError ? describeExit(r, timeoutMs) : `exit code ${r.exitCode}`
      const undone = await guard?.undo()
      const vaultNote = undone?.length ? `\n[the command changed dsh's vault (${undone.join(', ')}): put back — the vault holds the harness's records, not the workspace's]` : ''
      return {
        content: capText(`${output}${output && !output.endsWith('\n') ? '\n' : ''}[${status}]${vaultNote}`, config.bashMaxOutputBytes + 400),
        isError: r.exitCode !== 0 || !!undone?.length,
        exitCode: r.spawnError ? null : r.exitCode,
      }
    },
  }
}
