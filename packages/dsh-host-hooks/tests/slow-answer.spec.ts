/**
 * A hook the host takes longer than a second to answer: the host sends a
 * heartbeat of spaces ahead of its answer, and the real client (`sh` +
 * `curl`) prints exactly the answer; a failure after the heartbeat began
 * reaches the model as the fail-open note, as an HTTP error does.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ADAPTERS, HOOK_CLIENT, listenHooks, MESSAGES, writeNoteTemplates, type HookHost, type HookServer } from 'dsh-host-hooks'
import { tempDir } from 'dsh-testkit'

const claude = ADAPTERS.find(a => a.agent === 'claude-code')!

/** A host whose every hook call answers `answer` (or throws) after `ms`. */
function slowHost(ms: number, answer: () => unknown): HookHost {
  const stub = {
    handle: () => new Promise((resolve, reject) => setTimeout(() => {
      try {
        resolve(answer())
      } catch (error) {
        reject(error as Error)
      }
    }, ms)),
    busy: () => false,
    sessionIds: () => [],
  }
  return stub as unknown as HookHost
}

/** The client as Claude Code runs it for PostToolUse; what it printed. */
function runClient(ws: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [HOOK_CLIENT, ws, 'claude-code', 'PostToolUse', '30', '0'], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8') })
    child.on('error', reject)
    child.on('close', () => resolve(out))
    child.stdin.end(JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 's', tool_name: 'Bash', tool_use_id: 't', tool_input: { command: 'true' } }))
  })
}

let server: HookServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function serve(host: HookHost): Promise<string> {
  const ws = join(tempDir('dsh-hooks-slow-'), 'w')
  const vault = join(ws, '.dsh')
  writeNoteTemplates(claude, vault)
  server = await listenHooks({ host, vault, workspace: ws, idleMs: 60_000, onIdle: () => {} })
  return ws
}

describe('a hook answered after more than a second', () => {
  it('prints exactly the answer that follows the heartbeat', async () => {
    const answer = { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'checked' } }
    const ws = await serve(slowHost(2500, () => answer))
    expect(await runClient(ws)).toBe(JSON.stringify(answer))
  })

  it('fails open with the note when the host fails after the heartbeat began', async () => {
    const ws = await serve(slowHost(2500, () => { throw new Error('the suite broke') }))
    const note = JSON.parse(await runClient(ws)) as { hookSpecificOutput: { additionalContext: string } }
    expect(note.hookSpecificOutput.additionalContext).toBe(MESSAGES.notVerified('the guard could not be reached (curl exit 22)'))
  })
})
