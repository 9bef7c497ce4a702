import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionLogPath } from 'dsh-session'
import { lintLog } from 'dsh-invariants'
import { createHarness, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
})

const script = (...steps: object[]) => steps.map(s => JSON.stringify(s)).join('\n')

const WORK = script(
  { text: 'Creating the file, then checking it.', toolCalls: [{ name: 'write_file', arguments: { path: 'src/a.txt', content: 'one\n' } }] },
  { toolCalls: [
    { name: 'edit_file', arguments: { path: 'src/a.txt', old_string: 'one', new_string: 'two' } },
    { name: 'bash', arguments: { command: 'cat src/a.txt; exit 3' } },
    { name: 'no_such_tool', arguments: {} },
  ] },
  { text: 'Done.' },
)

describe('a real agent run under dsh-invariants', () => {
  it('completes a multi-step turn with writes, a failing command and an unknown tool; its stored log lints clean', async () => {
    harness = await createHarness({ script: WORK, jsonl: true })
    const { ctx, workspace } = harness
    const session = ctx.sessions.create('run', { cwd: workspace })
    const agent = ctx.agents.create(session)
    expect(await agent.send('go')).toBe('completed')
    expect(await agent.send('again')).toBe('completed')
    await agent.dispose()
    expect(session.ofType('tool/result').map(e => [e.data.name, e.data.isError])).toEqual([
      ['write_file', false], ['edit_file', false], ['bash', true], ['no_such_tool', true],
    ])
    expect(readFileSync(`${workspace}/src/a.txt`, 'utf8')).toBe('two\n')
    expect(session.events.every(e => Object.isFrozen(e) && Object.isFrozen(e.data))).toBe(true)
    await session.flush()
    const report = await lintLog(sessionLogPath(session.vault, session.id))
    expect(report.violations).toEqual([])
    expect(report.events).toBe(session.length)
  })

  it('survives a dispose → re-apply of dsh-invariants in the middle of a step (hot reload), agent status included', async () => {
    harness = await createHarness({ script: script({ toolCalls: [{ name: 'reload', arguments: {} }, { name: 'bash', arguments: { command: 'true' } }] }) })
    const { ctx, workspace } = harness
    let reloads = 0
    ctx.tools.register({
      name: 'reload', description: 'reload dsh-invariants', parameters: { type: 'object' }, effects: 'read',
      async execute() {
        await harness!.invariants!.dispose()
        await harness!.loadInvariants()
        reloads++
        return { content: 'reloaded' }
      },
    })
    const session = ctx.sessions.create('hot', { cwd: workspace })
    const agent = ctx.agents.create(session)
    // The agent is `running` across the reload; it then goes idle, which is
    // only legal because the new fiber adopted its current status.
    expect(await agent.send('go')).toBe('completed')
    expect(reloads).toBe(1)
    expect(session.ofType('error')).toEqual([])
    await agent.dispose()
    expect(() => ctx.emit('agent/status', agent, 'running')).toThrow('disposed → running leaves disposed')
  })

  it('ends the turn with an error when a plugin breaks the contract (the error names the rule)', async () => {
    harness = await createHarness({ script: script({ toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }) })
    const { ctx, workspace } = harness
    ctx.on('agent/step-results', async (batch, next) => {
      batch.session.append('turn/start', { turn: 99 })
      return next()
    })
    const session = ctx.sessions.create('broken', { cwd: workspace })
    const agent = ctx.agents.create(session)
    expect(await agent.send('go')).toBe('error')
    expect(session.ofType('error')[0]!.data.message).toBe('invariant violated in session broken at seq 6 (turn/start): '
      + '[turn-overlap] turn 99 starts while turn 0 is open; last events: 2 step/start, 3 usage, 4 assistant/message, 5 tool/call, 6 turn/start')
  })

  it('turns a mutation of a logged event into an error with freeze on, and lets it through with freeze off', async () => {
    const rewrite = async (freeze: boolean) => {
      harness = await createHarness({ invariants: { freeze }, script: script({ text: 'hello' }) })
      const { ctx, workspace } = harness
      ctx.on('agent/step-end', async (agent) => {
        (agent.session.events[0]!.data as { text: string }).text = 'something the user never said'
      })
      const session = ctx.sessions.create('mutating', { cwd: workspace })
      const reason = await ctx.agents.create(session).send('the real prompt')
      const first = (session.events[0]!.data as { text: string }).text
      await harness.dispose()
      harness = undefined
      return [reason, first]
    }
    expect(await rewrite(true)).toEqual(['error', 'the real prompt'])
    expect(await rewrite(false)).toEqual(['completed', 'something the user never said'])
  })
})
