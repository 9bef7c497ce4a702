import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { startProtocolServer, textStream, toolCallStream, type ProtocolServer, type Reply } from 'dsh-llm-openai/test-server'
import { tempDir } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

const servers: ProtocolServer[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(s => s.close())) })

async function setup(replies: Reply[]) {
  const server = await startProtocolServer(replies)
  servers.push(server)
  const dir = tempDir('dsh-chat-')
  const ws = join(dir, 'ws')
  mkdirSync(ws)
  const config = join(dir, 'cordis.yml')
  writeFileSync(config, [
    '- { id: sessions, name: dsh-session }',
    '- { id: sessions-jsonl, name: dsh-session/jsonl }',
    '- { id: tools, name: dsh-tools }',
    '- { id: workspace-tools, name: dsh-tools-workspace }',
    '- { id: llm, name: dsh-llm }',
    '- id: model',
    '  name: dsh-llm-openai',
    `  config: { baseUrl: '${server.baseUrl}', model: test-model, apiKey: test-key, retryDelayMs: 5 }`,
    '- { id: agents, name: dsh-agent }',
    '',
  ].join('\n'))
  return { server, ws, config }
}

/** `dsh chat` in a child process with pipes for stdin/stdout/stderr. */
function spawnChat(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'test', DSH_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, DSH_BASE_URL: undefined }
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'packages/dsh-cli/src/bin.ts'), 'chat', ...args], { cwd: repoRoot, env, stdio: 'pipe' })
  const out = { stdout: '', stderr: '' }
  const waiters: { stream: 'stdout' | 'stderr'; text: string; resolve: () => void }[] = []
  const check = () => {
    for (const w of [...waiters]) {
      if (out[w.stream].includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
  child.stdout.on('data', (b: Buffer) => { out.stdout += b; check() })
  child.stderr.on('data', (b: Buffer) => { out.stderr += b; check() })
  const exit = new Promise<number | null>(r => child.on('exit', code => r(code)))
  return {
    child, out, exit,
    /** Resolves once `text` has appeared on the stream; rejects with what did appear after 20 s. */
    waitFor(stream: 'stdout' | 'stderr', text: string) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} on ${stream}; stdout:\n${out.stdout}\nstderr:\n${out.stderr}`)), 20_000)
        waiters.push({ stream, text, resolve: () => { clearTimeout(timer); resolve() } })
        check()
      })
    },
  }
}

function storedLog(ws: string) {
  const [file] = readdirSync(join(ws, '.dsh/sessions'))
  return readFileSync(join(ws, '.dsh/sessions', file!), 'utf8').trim().split('\n').map(l => JSON.parse(l) as { type: string; data: Record<string, unknown> })
}

function turnEnds(ws: string): unknown[] {
  try {
    return storedLog(ws).filter(e => e.type === 'turn/end')
  } catch {
    return [] // no log file yet
  }
}

describe('dsh chat', () => {
  it('piped prompts run as two turns against the configured model; answers, tool calls and results are shown; the log is saved', async () => {
    const { server, ws, config } = await setup([
      { stream: toolCallStream([{ id: 'w1', name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }], { text: 'Creating it.' }) },
      { stream: textStream('Created hello.txt.') },
      { stream: textStream('Second answer.') },
    ])
    const chat = spawnChat(['--workspace', ws, '--config', config])
    chat.child.stdin.end('make a file\n\nand then?\n')
    expect(await chat.exit).toBe(0)
    expect(chat.out.stdout).toContain('› make a file\nassistant: Creating it.\n  → write_file hello.txt\n  ✓ write_file\n')
    expect(chat.out.stdout).toContain('assistant: Created hello.txt.\n› and then?\nassistant: Second answer.\n')
    expect(chat.out.stderr).toMatch(/^dsh chat: session \S+ · model test-model at http:\/\/127\.0\.0\.1:\d+\/v1 · Ctrl-C aborts a turn, Ctrl-D ends\n/)
    expect(chat.out.stderr).toMatch(/dsh chat: session \S+: completed · log .*\.jsonl\n$/)
    expect(readFileSync(join(ws, 'hello.txt'), 'utf8')).toBe('hi\n')
    expect(server.requests).toHaveLength(3)
    expect(server.requests[2]!.body!.messages.map(m => [m.role, m.content])).toEqual([
      ['system', expect.any(String)], ['user', 'make a file'], ['assistant', 'Creating it.'], ['tool', expect.any(String)],
      ['assistant', 'Created hello.txt.'], ['user', 'and then?'],
    ])
    const log = storedLog(ws)
    expect(log.filter(e => e.type === 'turn/end').map(e => e.data.reason)).toEqual(['completed', 'completed'])
  })

  it('--json prints nothing but the session events on stdout', async () => {
    const { ws, config } = await setup([{ stream: textStream('Only JSON.') }])
    const chat = spawnChat(['--workspace', ws, '--config', config, '--json'])
    chat.child.stdin.end('hello\n')
    expect(await chat.exit).toBe(0)
    const events = chat.out.stdout.trim().split('\n').map(l => JSON.parse(l) as { type: string; data: { text?: string } })
    expect(events[0]).toMatchObject({ type: 'user/message', data: { text: 'hello' } })
    expect(events.find(e => e.type === 'assistant/message')!.data.text).toBe('Only JSON.')
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
    expect(chat.out.stderr).toBe('')
  })

  it('Ctrl-C aborts the running turn; the chat goes on; a second Ctrl-C exits after the session is flushed', async () => {
    const { server, ws, config } = await setup([
      { stream: textStream('Thinking very hard about it', 4).slice(0, 3), hang: true },
      { stream: textStream('Fine.') },
    ])
    const chat = spawnChat(['--workspace', ws, '--config', config])
    chat.child.stdin.write('first\n')
    await chat.waitFor('stdout', 'assistant: Thin')
    chat.child.kill('SIGINT')
    await chat.waitFor('stderr', '^C aborting the turn · Ctrl-C again to exit\n')
    await chat.waitFor('stdout', 'turn ended: aborted\n')
    await server.waitForClientAborts(1)
    chat.child.stdin.write('second\n')
    await chat.waitFor('stdout', 'assistant: Fine.\n')
    // The turn is over once its end is flushed to the log (the text arrives a little earlier); the log
    // is the chat process's, so the file is polled (no event crosses the process boundary).
    await vi.waitFor(() => expect(turnEnds(ws)).toHaveLength(2), { timeout: 20_000, interval: 25 })
    chat.child.kill('SIGINT')
    await chat.waitFor('stderr', '^C · Ctrl-C again to exit, or Ctrl-D\n')
    chat.child.kill('SIGINT')
    expect(await chat.exit).toBe(130)
    expect(chat.out.stderr).toMatch(/dsh chat: session \S+ log .*\.jsonl\n$/)
    const log = storedLog(ws)
    expect(log.filter(e => e.type === 'user/message').map(e => e.data.text)).toEqual(['first', 'second'])
    expect(log.filter(e => e.type === 'turn/end').map(e => e.data.reason)).toEqual(['aborted', 'completed'])
    expect(log.filter(e => e.type === 'error')).toEqual([])
  })

  it('SIGTERM (a runner stopping it) aborts the turn, flushes the session and exits 143', async () => {
    const { ws, config } = await setup([{ stream: textStream('Working on it', 4).slice(0, 2), hang: true }])
    const chat = spawnChat(['--workspace', ws, '--config', config])
    chat.child.stdin.write('go\n')
    await chat.waitFor('stdout', 'assistant: Work')
    chat.child.kill('SIGTERM')
    expect(await chat.exit).toBe(143)
    expect(storedLog(ws).filter(e => e.type === 'turn/end').map(e => e.data.reason)).toEqual(['aborted'])
  })

  it('without a model key (default cordis.yml) it says how to set one and exits 2, writing nothing', async () => {
    const ws = tempDir('dsh-chat-')
    const r = await dsh(['chat', '--workspace', ws], { input: 'hello\n' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe('dsh chat: no API key: set DEEPSEEK_API_KEY (or DSH_API_KEY) for DeepSeek, or DSH_BASE_URL, DSH_MODEL and DSH_API_KEY (or OPENAI_BASE_URL and OPENAI_API_KEY) for another OpenAI-compatible server\n')
    expect(r.stdout).toBe('')
    expect(readdirSync(ws)).toEqual([])
  })
})
