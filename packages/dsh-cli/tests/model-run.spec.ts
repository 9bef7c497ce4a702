import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import yaml from 'js-yaml'
import { afterEach, describe, expect, it } from 'vitest'
import { entryListSchema } from '@deepseek-ai/cordis-plugin-include'
import { parseScript } from 'dsh-llm'
import { scriptReplies, startProtocolServer, type ProtocolServer } from 'dsh-llm-openai/test-server'
import { dsh, repoRoot, tempDir } from './helpers.ts'

const servers: ProtocolServer[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(s => s.close())) })

/** The repo's cordis.yml with its model entry pointed at `baseUrl` (and enabled). */
function configFor(baseUrl: string): string {
  const entries = yaml.load(readFileSync(join(repoRoot, 'cordis.yml'), 'utf8'), { schema: entryListSchema }) as { id?: string; name: string; disabled?: unknown; config?: unknown }[]
  const model = entries.find(e => e.name === 'dsh-llm-openai')
  if (!model) throw new Error('cordis.yml has no dsh-llm-openai entry')
  delete model.disabled
  model.config = { baseUrl, model: 'test-model', apiKey: 'test-key' }
  return yaml.dump(entries, { schema: entryListSchema })
}

describe('dsh run against an OpenAI-compatible server', () => {
  it('a full guarded session: the model\'s writes are checked, a type-breaking one is rolled back', async () => {
    const steps = parseScript(readFileSync(join(repoRoot, 'examples/demo/script.jsonl'), 'utf8'))
    const good = (steps.flatMap(s => s.toolCalls ?? []).find(c => (c.arguments as { path?: string }).path === 'src/count.ts')!.arguments as { content: string }).content
    steps.splice(steps.length - 1, 0, {
      text: 'Now a bad edit.',
      toolCalls: [{ name: 'write_file', arguments: { path: 'src/count.ts', content: "export function itemCount(): number {\n  return 'oops'\n}\n" } }],
    })
    const server = await startProtocolServer(scriptReplies(steps, { size: 7 }))
    servers.push(server)
    const dir = tempDir('dsh-model-run-')
    const ws = join(dir, 'workspace')
    cpSync(join(repoRoot, 'examples/demo/workspace'), ws, { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    mkdirSync(join(dir, 'conf'))
    const config = join(dir, 'conf/cordis.yml')
    writeFileSync(config, configFor(server.baseUrl))
    const r = await dsh(['run', 'Follow the script.', '--workspace', ws, '--config', config], { env: { DSH_API_KEY: 'test-key' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(server.requests).toHaveLength(steps.length)
    expect(r.stdout).toContain('  ✗ write_file\n      rolled back: typecheck failed after write_file on src/count.ts\n')
    expect(readFileSync(join(ws, 'src/count.ts'), 'utf8')).toBe(good)
    expect(r.stdout).toContain('assistant: Tests pass. Done.\n')
  })
})
