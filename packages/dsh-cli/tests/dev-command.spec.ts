import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { Readable } from 'node:stream'
import { main } from 'dsh-cli'
import { CORE_ENTRIES, tempDir } from 'dsh-testkit'
import { repoRoot } from './helpers.ts'
import { devProject, greeterSource, withTimeout } from './dev-helpers.ts'

// tsx by URL: the child runs in the project's directory, where no node_modules resolves it.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** A running `dsh dev` child: its output lines as they come, and its stdin. */
function spawnDev(args: string[], cwd: string) {
  const child = spawn(process.execPath, ['--import', tsx, join(repoRoot, 'packages/dsh-cli/src/bin.ts'), 'dev', ...args], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', DSH_API_KEY: '', DEEPSEEK_API_KEY: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const lines: { stream: 'out' | 'err'; text: string }[] = []
  const waiters: { stream: 'out' | 'err'; pattern: RegExp; from: number; resolve: (line: string) => void }[] = []
  const check = () => {
    for (const w of [...waiters]) {
      const hit = lines.slice(w.from).find(l => l.stream === w.stream && w.pattern.test(l.text))
      if (!hit) continue
      waiters.splice(waiters.indexOf(w), 1)
      w.resolve(hit.text)
    }
  }
  for (const [stream, source] of [['out', child.stdout], ['err', child.stderr]] as const) {
    createInterface({ input: source }).on('line', (text) => {
      lines.push({ stream, text })
      check()
    })
  }
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  return {
    lines,
    stdin: child.stdin,
    exited,
    kill: () => child.kill('SIGKILL'),
    /** The next line on `stream` matching `pattern` (from now on, or from line index `from`). */
    wait(stream: 'out' | 'err', pattern: RegExp, from = lines.length): Promise<string> {
      const found = new Promise<string>(resolve => waiters.push({ stream, pattern, from, resolve }))
      check()
      return withTimeout(found, 30_000, () => `no ${stream} line matching ${pattern} (got:\n${lines.map(l => `${l.stream}: ${l.text}`).join('\n')}\n)`)
    },
  }
}

describe('dsh dev (the command)', () => {
  it('reloads an edited plugin and a cordis.yml change in the running process, shows a syntax error with its line, and answers prompts from stdin', async () => {
    const project = devProject(`# dev command spec\n${CORE_ENTRIES}- id: greeter\n  name: ./plugins/greeter.ts\n`)
    project.write('plugins/greeter.ts', greeterSource('hello v1'))
    project.write('plugins/noop.ts', `export const name = 'noop'\nexport function apply() {}\n`)
    const script = project.script([{ toolCalls: [{ name: 'greet', arguments: {} }] }, { text: 'done' }])
    const dev = spawnDev(['--workspace', project.workspace, '--config', project.config, '--script', script, '--debounce', '30'], project.dir)
    try {
      await dev.wait('err', /^\[dev\] session \S+ on .*: type a prompt and press Enter; Ctrl-D or Ctrl-C to stop$/, 0)
      expect(dev.lines.find(l => l.text.startsWith('[dev] watching'))?.text).toMatch(/^\[dev\] watching \d+ files of 7 plugins and .*cordis\.yml$/)

      let next = dev.wait('err', /^\[dev\] reloaded/)
      project.write('plugins/greeter.ts', greeterSource('hello v2'))
      expect(await next).toMatch(/^\[dev\] reloaded greeter \(plugins\/greeter\.ts\) in \d+ ms$/)

      next = dev.wait('err', /^\[dev\] cordis\.yml:/)
      project.write('cordis.yml', project.read('cordis.yml') + '- id: noop\n  name: ./plugins/noop.ts\n')
      expect(await next).toMatch(/^\[dev\] cordis\.yml: added noop in \d+ ms$/)

      next = dev.wait('err', /^\[dev\] reload of greeter failed/)
      project.write('plugins/greeter.ts', greeterSource('hello v3', 'const broken = (1 +;'))
      expect(await next).toBe('[dev] reload of greeter failed: plugins/greeter.ts:4:20: Unexpected ";" — the previous version keeps running; fix it and save again')

      const answer = dev.wait('out', /^assistant: done$/)
      dev.stdin.write('say hello\n')
      await answer
      const transcript = dev.lines.filter(l => l.stream === 'out').map(l => l.text)
      expect(transcript).toEqual(['› say hello', '  → greet {}', '  ✓ greet', '      hello v2', 'assistant: done'])

      dev.stdin.end()
      expect(await withTimeout(dev.exited, 15_000, 'dsh dev did not exit after its input ended')).toBe(0)
      expect(project.read('cordis.yml')).toBe(`# dev command spec\n${CORE_ENTRIES}- id: greeter\n  name: ./plugins/greeter.ts\n- id: noop\n  name: ./plugins/noop.ts\n`)
      expect(dev.lines.filter(l => l.stream === 'err' && /^(error|warn) /.test(l.text))).toEqual([])
    } finally {
      dev.kill()
    }
  })

  it('--help describes it; bad input is exit 2 with one line, before anything starts', async () => {
    const run = async (argv: string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await main(argv, {
        stdout: (t) => { stdout += t }, stderr: (t) => { stderr += t }, stdin: Readable.from([]), stderrIsTTY: false, env: {},
      })
      return { code, stdout, stderr }
    }
    const help = await run(['dev', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: dsh dev \[--workspace DIR\] \[--config FILE\]/)
    expect(await run(['dev', '--debounce', 'soon'])).toEqual({ code: 2, stdout: '', stderr: 'dsh dev: --debounce needs a whole number of milliseconds (got "soon")\n' })
    expect(await run(['dev', '--workspace', '/nonexistent/dsh-dev'])).toEqual({ code: 2, stdout: '', stderr: 'dsh dev: workspace /nonexistent/dsh-dev does not exist\n' })
    expect(await run(['dev', '--workspace', tempDir(), '--config', '/nonexistent/cordis.yml'])).toEqual({ code: 2, stdout: '', stderr: 'dsh dev: /nonexistent/cordis.yml: cannot read config (ENOENT)\n' })
  })
})
