/**
 * Readers of the verdicts while one still runs in the background, with no
 * hooks host to wait on (the lean harness in this process, the readers in
 * others): the agent loop on a scripted model, the real dsh-snapshot,
 * dsh-dstvalid (tsc, vitest), dsh-proofchain and the JSONL log, and the
 * real `dsh` commands in child processes. The write's test waits while a hold file
 * exists, so its verdict is pending for as long as the spec needs. The
 * session page, `dsh proof show` and `dsh claims check` show that call
 * pending ("kept for now: tests running"), not kept; once the verdict is
 * in, the page shows it rolled back and the other write kept.
 */
import { cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import DstValidService, { PENDING_NOTE } from 'dsh-dstvalid'
import * as ProofChain from 'dsh-proofchain'
import { pendingCalls, readSession, startReviewServer } from 'dsh-review'
import * as SessionJsonl from 'dsh-session/jsonl'
import * as Snapshot from 'dsh-snapshot'
import { harness, tempDir } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

/** A test of the discount that waits while `hold` exists: every verdict on src/money.ts waits for it. */
const heldTest = (hold: string) => `import { existsSync } from 'node:fs'
import { expect, it } from 'vitest'
import { applyDiscount } from '../src/money.ts'

it('rounds a discount to the cent, once let through', async () => {
  while (existsSync(${JSON.stringify(hold)})) await new Promise(resolve => setTimeout(resolve, 50))
  expect(applyDiscount(999, 10)).toBe(899)
}, 600_000)
`
const SWAP = { path: 'src/money.ts', old_string: 'return a + b', new_string: 'return b + a' }
const ROUND_UP = { path: 'src/money.ts', old_string: 'Math.round(amount * (1 - percent / 100))', new_string: 'Math.ceil(amount * (1 - percent / 100))' }

describe('reading verdicts while one runs in the background, no hooks host', { timeout: 240_000 }, () => {
  it('the page, dsh proof show and dsh claims check show the call pending, not kept; once in, the page shows its verdict', async () => {
    const dir = tempDir('dsh-pending-verdicts-')
    const ws = join(dir, 'shop')
    const hold = join(dir, 'hold')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    writeFileSync(join(ws, 'tests/held.test.ts'), heldTest(hold))
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    const kit = await harness({
      workspace: ws,
      script: [
        { toolCalls: [{ id: 'swap', name: 'edit_file', arguments: SWAP }] },
        { text: 'Done.' },
        { toolCalls: [{ id: 'up', name: 'edit_file', arguments: ROUND_UP }] },
        // The stop waits for the verdict, and is refused with the rollback.
        { text: 'Done.' },
        { text: 'Understood.' },
      ],
      plugins: [[SessionJsonl, { intervalMs: 0 }], [Snapshot, {}], [DstValidService, { background: true, verdicts: 'strict', warmOnStart: false }], [ProofChain, {}]],
    })
    onTestFinished(() => kit.dispose())
    const session = kit.session
    const vault = session.vault
    const verdicts = () => (readSession(vault, session.id)?.items ?? []).flatMap(i => (i.kind === 'call' ? [[i.callId, i.verdict]] : []))

    // A turn with a good write, its verdict in when the turn ends (the test let through).
    await kit.agent.send('Swap the sum.')
    // The next turn's write: its test is held, so its verdict stays pending until the hold goes.
    writeFileSync(hold, '')
    onTestFinished(() => rmSync(hold, { force: true }))
    const turn = kit.agent.send('Round the discount up.')
    const returned = await kit.waitFor('tool/result', { where: e => e.data.callId === 'up', timeoutMs: 120_000 })
    expect(returned.data.content).toBe(`edited src/money.ts\n${PENDING_NOTE}`)
    await session.flush()

    expect(verdicts()).toEqual([['swap', 'kept'], ['up', 'pending']])
    expect(pendingCalls(vault)).toEqual([{ sessionId: session.id, callId: 'up', tool: 'edit_file', paths: ['src/money.ts'] }])
    const server = await startReviewServer({ workspace: ws, vault })
    onTestFinished(() => server.close())
    const page = await (await fetch(server.url.replace('/?', `/session/${encodeURIComponent(session.id)}?`))).text()
    expect(page).toContain('<span class="v v-pending">pending: kept for now, tests running</span>')

    const line = `pending (kept for now: tests running): edit_file src/money.ts (call up, session ${session.id})`
    const shown = await dsh(['proof', 'show', '--vault', vault, '--budget', '0'])
    expect(shown.exitCode).toBe(0)
    expect(shown.stdout.trimEnd().split('\n').at(-1)).toBe(line)
    const json = JSON.parse((await dsh(['proof', 'show', '--vault', vault, '--json'])).stdout) as { pending: unknown }
    expect(json.pending).toEqual([{ sessionId: session.id, callId: 'up', tool: 'edit_file', paths: ['src/money.ts'] }])
    const checked = await dsh(['claims', 'check', '--vault', vault, '--session', session.id, '--verified', 'Rounded the discount up.'])
    expect(checked.stdout.trimEnd().split('\n').at(-1)).toBe(`${line}: not in this check yet`)
    // Still held: the readers did not wait for it (nothing here to wait on), the write is in the file.
    expect(readFileSync(join(ws, 'src/money.ts'), 'utf8')).toContain('Math.ceil')

    rmSync(hold)
    await turn
    await session.flush()
    expect(existsSync(hold)).toBe(false)
    expect(verdicts()).toEqual([['swap', 'kept'], ['up', 'rolled back']])
    expect(pendingCalls(vault)).toEqual([])
    const after = await dsh(['proof', 'show', '--vault', vault, '--budget', '0'])
    expect(after.stdout).not.toContain('pending')
  })
})
