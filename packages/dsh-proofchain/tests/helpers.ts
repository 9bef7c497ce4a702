import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { ModelRequest, ScriptStep } from 'dsh-llm'
import { harness, tempDir, type HarnessOptions } from 'dsh-testkit'
import * as Proofchain from 'dsh-proofchain'
import { ProofChain, type ProofChainOptions, type ProofInput } from 'dsh-proofchain'
import type { VerifyResult } from 'dsh-dstvalid'

/** A chain in a fresh temp dir; `now` counts up from 1_000 so entries are deterministic. */
export function freshChain(options: Partial<ProofChainOptions> = {}): ProofChain {
  let clock = 1_000
  const warnings: string[] = []
  const chain = ProofChain.open({ file: join(tempDir('dsh-proof-'), 'proofchain.jsonl'), now: () => clock++, onWarning: m => warnings.push(m), ...options })
  return Object.assign(chain, { warnings })
}

/** Entry `i` of a synthetic stream: subjects cycle, every third one fails. */
export function sample(i: number, subjects = 7, sessionId = 's1'): ProofInput {
  const n = i % subjects
  const fail = i % 3 === 0
  return {
    sessionId,
    kind: 'typecheck',
    subject: `typecheck src/m${n}.ts`,
    outcome: fail ? 'fail' : 'ok',
    detail: fail ? `rolled back after edit_file: 1 new problem: src/m${n}.ts:${i} TS2322 bad` : `passed after edit_file (${i} ms)`,
  }
}

/** Append `n` samples and wait for them. */
export async function fill(chain: ProofChain, n: number, from = 0, subjects = 7): Promise<void> {
  await chain.appendMany(Array.from({ length: n }, (_, k) => sample(from + k, subjects)))
}

export function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').slice(0, -1)
}

export function writeLines(file: string, rows: string[]) {
  writeFileSync(file, rows.map(r => r + '\n').join(''))
}

/**
 * The kit's harness with a scripted model, dsh-proofchain (`config`), and a
 * stand-in verifier that emits `verify/result` after each write the way
 * dsh-dstvalid does (content containing "BROKEN" is "rolled back" with one
 * new problem). Its session is `s1`; `requests` holds every model request.
 */
export async function bootHarness(script: ScriptStep[], config: Partial<Proofchain.Config> = {}, options: Pick<HarnessOptions, 'workspace' | 'session'> = {}) {
  const h = await harness({
    script,
    session: { id: 's1' },
    ...options,
    plugins: [[Proofchain, Proofchain.Config(config)], { name: 'stand-in-verifier', inject: ['tools'], apply: standInVerifier }],
  })
  const requests: ModelRequest[] = []
  h.ctx.on('agent/request', async (request, next) => {
    const r = await next()
    requests.push(r)
    return r
  })
  return Object.assign(h, { requests })
}

function standInVerifier(ctx: Context) {
  ctx.on('tools/execute', async (exec, next) => {
    const result = await next()
    if (exec.tool?.effects !== 'write' || result.isError) return result
    const paths = exec.tool.paths!(exec.arguments)
    const content = JSON.stringify(exec.arguments)
    const broken = content.includes('BROKEN')
    const verdict: VerifyResult = {
      sessionId: exec.session.id, callId: exec.callId, tool: exec.name, paths, check: 'typecheck',
      outcome: broken ? 'rolled-back' : 'pass',
      newProblems: broken ? [`${paths[0]}:1 TS2322 Type 'string' is not assignable to type 'number'.`] : [],
      durationMs: 12,
    }
    ctx.emit('verify/result', verdict)
    return broken ? { content: `rolled back: typecheck failed after ${exec.name} on ${paths.join(', ')}`, isError: true } : result
  })
}

/**
 * Texts of the proofchain notices in a model request: the parts of `user`
 * messages reading `[harness: proofchain] <text>` (adjacent notices and user
 * text share one message, parts separated by a blank line).
 */
export function proofMessages(request: ModelRequest): string[] {
  return request.messages
    .flatMap(m => (m.role === 'user' ? m.content.split(/\n\n(?=\[harness: )/) : []))
    .filter(part => part.startsWith('[harness: proofchain] '))
    .map(part => part.slice('[harness: proofchain] '.length))
}
