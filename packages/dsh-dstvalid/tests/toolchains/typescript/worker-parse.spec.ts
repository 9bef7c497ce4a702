/**
 * The body-edit parser parses in the type-check worker (its TypeScript is
 * loaded there already) when the worker is idle: the worker's answers are
 * the ones this thread's own parse gives, and a worker busy with a check
 * is not waited for (the parser answers on its own, the same).
 */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it, onTestFinished } from 'vitest'
import { bodyEdit, commentOnly, parseWith, predictedNames, TsWorkerClient, type ParseRequest } from 'dsh-dstvalid'
import { BODY_EDIT_LINES, makeWorkspace } from '../../helpers.ts'

const BASE = [
  ...BODY_EDIT_LINES,
  '  // @ts-expect-error',
  'export const lazy = () => import(/* @vite-ignore */ x)',
  '',
].join('\n')

const EDITS: [string, string][] = [
  ['/** doc */', '/** other doc */\n// more'],
  ['return a + b', 'return b + a'],
  ['const h = () => k', 'const h = () => k + 0'],
  ['this.v * 2', 'this.v * 3'],
  ['v => v + 1', 'v => v + 2'],
  ['add(a: number, b: number)', 'add(a: number, b = 1)'],
  ['  // @ts-expect-error', '  // @ts-expect-error: why'],
  ['/* @vite-ignore */ ', ''],
  ['return a + b', 'return a +'],
]

const REQUESTS: ParseRequest[] = [
  ...EDITS.flatMap(([from, to]): ParseRequest[] => [
    { op: 'bodyEdit', file: 'src/calc.ts', before: BASE, after: BASE.replace(from, to) },
    { op: 'commentOnly', file: 'src/calc.ts', before: BASE, after: BASE.replace(from, to) },
  ]),
  { op: 'predictedNames', file: 'src/calc.ts', text: BASE },
  { op: 'predictedNames', file: 'src/broken.ts', text: 'export function (' },
]

describe('the body-edit parser in the type-check worker', { timeout: 120_000 }, () => {
  const client = () => {
    const root = makeWorkspace()
    const c = new TsWorkerClient({ root, configPath: join(root, 'tsconfig.json'), typescriptPath: createRequire(import.meta.url).resolve('typescript') }, { maxHeapMb: 0 })
    onTestFinished(() => c.dispose())
    return c
  }

  it('answers every question as this thread\'s parse does, once started and idle', async () => {
    const c = client()
    // Not started: not its to answer.
    expect(await c.parse(REQUESTS[0]!)).toBeUndefined()
    await c.start()
    for (const request of REQUESTS) expect(await c.parse(request)).toEqual({ value: parseWith(ts, request) })
    // Through the parser's own entry points (the worker offered itself): the same answers.
    expect(await bodyEdit('src/calc.ts', BASE, BASE.replace('return a + b', 'return b + a'))).toEqual({ kind: 'body', functions: ['add'] })
    expect(await commentOnly('src/calc.ts', BASE, BASE.replace('/* @vite-ignore */ ', ''))).toBe('src/calc.ts: a directive comment changed before line 8')
    expect([...(await predictedNames('src/calc.ts', BASE))!].sort()).toEqual(['', '<instance_members_initializer>', '<static_initializer>', '<static_members_initializer>', 'Box', 'add', 'f', 'get', 'get double', 'h', 'lazy', 'mul', 'scale'])
  })

  it('is not waited for while it checks: the parser answers on its own, the same', async () => {
    const c = client()
    await c.start()
    const check = c.check([], 3_600_000)
    // The check is in flight once the worker has it.
    while (c.busyMs === undefined) await new Promise(r => setImmediate(r))
    expect(await c.parse(REQUESTS[1]!)).toBeUndefined()
    expect(await bodyEdit('src/calc.ts', BASE, BASE.replace('return a + b', 'return b + a'))).toEqual({ kind: 'body', functions: ['add'] })
    expect((await check).status).toBe('ok')
    await c.dispose()
    expect(await c.parse(REQUESTS[1]!)).toBeUndefined()
  })
})
