import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import yaml from 'js-yaml'
import { afterEach, describe, expect, it } from 'vitest'
import { entryListSchema } from '@deepseek-ai/cordis-plugin-include'
import { parseScript } from 'dsh-llm'
import { scriptReplies, startProtocolServer, type ProtocolServer } from 'dsh-llm-openai/test-server'
import { tempDir } from 'dsh-testkit'
import { dsh, repoRoot } from './helpers.ts'

const servers: ProtocolServer[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(s => s.close())) })

/** The repo's cordis.yml with its model entry pointed at `baseUrl` (and enabled), proof summaries at every step. */
function configFor(baseUrl: string): string {
  const entries = yaml.load(readFileSync(join(repoRoot, 'cordis.yml'), 'utf8'), { schema: entryListSchema }) as { id?: string; name: string; disabled?: unknown; config?: unknown }[]
  const model = entries.find(e => e.name === 'dsh-llm-openai')
  if (!model) throw new Error('cordis.yml has no dsh-llm-openai entry')
  delete model.disabled
  model.config = { baseUrl, model: 'test-model', apiKey: 'test-key' }
  // Proof summaries at every step: harness notices mid-conversation, after tool results.
  const proofchain = entries.find(e => e.name === 'dsh-proofchain')
  if (!proofchain) throw new Error('cordis.yml has no dsh-proofchain entry')
  proofchain.config = { ...(proofchain.config as object | undefined), inject: 'step' }
  return yaml.dump(entries, { schema: entryListSchema })
}

describe('dsh run against an OpenAI-compatible server', () => {
  it('a full guarded session: the model\'s writes are checked, a type-breaking one is rolled back; harness notices pass a "system first" chat template', async () => {
    const good = 'export function double(n: number): number {\n  return n * 2\n}\n'
    const steps = parseScript([
      { text: 'Adding double.', toolCalls: [{ name: 'write_file', arguments: { path: 'src/double.ts', content: good } }] },
      { text: 'Changing it.', toolCalls: [{ name: 'edit_file', arguments: { path: 'src/double.ts', old_string: 'n * 2', new_string: "'twice'" } }] },
      { text: 'Done.' },
    ].map(s => JSON.stringify(s)).join('\n'))
    // Like vLLM and llama.cpp: a system message anywhere but first is a 400.
    const server = await startProtocolServer(scriptReplies(steps, { size: 7 }), { template: 'system-first' })
    servers.push(server)
    const dir = tempDir('dsh-model-run-')
    const ws = join(dir, 'workspace')
    mkdirSync(join(ws, 'src'), { recursive: true })
    writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'tiny', private: true, type: 'module' }))
    writeFileSync(join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'ESNext', moduleResolution: 'bundler', skipLibCheck: true, types: [] }, include: ['src'] }))
    writeFileSync(join(ws, 'src/main.ts'), 'export const answer: number = 42\n')
    // The workspace's own TypeScript judges it.
    symlinkSync(join(repoRoot, 'node_modules'), join(ws, 'node_modules'), 'dir')
    mkdirSync(join(dir, 'conf'))
    const config = join(dir, 'conf/cordis.yml')
    writeFileSync(config, configFor(server.baseUrl))
    const r = await dsh(['run', 'Add double.', '--workspace', ws, '--config', config], { env: { DSH_API_KEY: 'test-key' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(server.requests).toHaveLength(steps.length)
    const roles = server.requests.map(q => q.body!.messages.map(m => m.role).join(' '))
    expect(roles.at(-1)).toBe('system user assistant tool user assistant tool user')
    const notices = server.requests.flatMap(q => q.body!.messages).filter(m => m.role === 'user' && String(m.content).startsWith('[harness: proofchain] '))
    expect(notices.length).toBeGreaterThan(0)
    expect(r.stdout).toContain('  ✗ edit_file\n      rolled back: typecheck failed after edit_file on src/double.ts\n')
    expect(readFileSync(join(ws, 'src/double.ts'), 'utf8')).toBe(good)
    expect(r.stdout).toContain('assistant: Done.\n')
  })
})
