/**
 * `pnpm bench test-map` on a real project (DSH_BENCH_WORKSPACE, a throw-away
 * clone with its dependencies installed; DSH_BENCH_MODULE, one of its
 * source modules): the module's related test files once with the calls
 * recorder (the map) and once without, then, for each top-level function of
 * the module (at most DSH_BENCH_EDITS), a same-behaviour body edit (`void 0`
 * as its first statement) and a breaking one (it throws first), each judged
 * by the map selection and by the selection by imports: test files, tests
 * and time per edit, and whether both found the same failing tests. Every
 * file is put back byte for byte.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { resolveFromWorkspace, TestMap, VitestCheck, vitestCommand, WarmVitestCheck, type Change, type CheckIO, type Measurement } from 'dsh-dstvalid'

export const env = (name: string, def: number) => Number(process.env[name] ?? def)
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN
}
export const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** Tests a measurement ran (passed or failed) and its test files. */
export function counted(m: Measurement): { tests: number; files: number } {
  const files = m.scope === 'all' ? 0 : m.scope.length
  return { tests: (m.passed?.length ?? 0) + m.problems.length, files }
}

/** Top-level functions with a block body: their name and the offset just after the body's `{`. */
export function functionsOf(file: string, text: string): { name: string; at: number }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: { name: string; at: number }[] = []
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.name && s.body) out.push({ name: s.name.text, at: s.body.getStart(sf) + 1 })
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) {
        const init = d.initializer
        if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && ts.isBlock(init.body)) out.push({ name: d.name.text, at: init.body.getStart(sf) + 1 })
      }
    }
  }
  return out
}

export async function runWorkspaceBench(root: string, module: string): Promise<void> {
  if (!module) throw new Error('DSH_BENCH_MODULE: the module to edit (workspace-relative) is required with DSH_BENCH_WORKSPACE')
  const vitestNode = resolveFromWorkspace(root, 'vitest/node')
  const command = vitestCommand(root)
  if (!vitestNode || !command) throw new Error(`${root}: no vitest installed`)
  const timeoutMs = env('DSH_BENCH_TIMEOUT_S', 3600) * 1000
  const notices: string[] = []
  const io: CheckIO = { record: () => {}, notice: (_level, text) => { notices.push(text) }, timeoutMs, maxOutputBytes: 1 << 20 }
  const cli = new VitestCheck({ root, command, mode: 'related' })
  const mapped = new WarmVitestCheck({ root, vitestNode, mode: 'related', cli, maxRssMb: 0, testMap: new TestMap() })
  const plain = new WarmVitestCheck({ root, vitestNode, mode: 'related', cli, maxRssMb: 0 })
  const abs = join(root, module)
  const original = readFileSync(abs)
  const text = original.toString('utf8')
  const byImports: Change = { paths: [abs], files: [module] }
  const edited = (at: number, statement: string): Change => {
    writeFileSync(abs, text.slice(0, at) + statement + text.slice(at))
    return { ...byImports, before: new Map([[abs, original]]) }
  }
  const rows: string[] = []
  const same: boolean[] = []
  const ratios: number[] = []
  const times: { map: number[]; files: number[] } = { map: [], files: [] }
  try {
    // The related test files of the module, without the recorder and with it (the map recorded).
    let t = performance.now()
    const first = await plain.measure(byImports, io)
    const withoutMs = performance.now() - t
    t = performance.now()
    const recorded = await mapped.measure(byImports, io)
    const withMs = performance.now() - t
    const { files, tests } = counted(recorded)
    const before = new Set(first.problems.map(p => p.key))
    console.log(`${root} (${module}); load average ${loadavg().map(x => x.toFixed(1)).join(', ')}`)
    console.log(`related test files: ${files} (${tests} tests; ${counted(first).tests} without the recorder), ${first.problems.length} failing before any edit`)
    console.log(`related run without the recorder ${sec(withoutMs)}, with it (the map recorded) ${sec(withMs)}: ${(((withMs / withoutMs) - 1) * 100).toFixed(1)} % (goal ≤ 20 %; the second run is warmer)\n`)
    const fns = functionsOf(module, text).slice(0, env('DSH_BENCH_EDITS', 6))
    for (const fn of fns) {
      for (const [kind, statement] of [['same behaviour', ' void 0;'], ['throws', " if (Date.now() > 0) throw new Error('dsh bench: a behaviour change');"]] as const) {
        notices.length = 0
        const change = edited(fn.at, statement)
        t = performance.now()
        const byMap = await mapped.measure(change, io)
        const mapMs = performance.now() - t
        const note = notices.find(n => n.startsWith('tests: ')) ?? '(by imports)'
        // A same-behaviour edit runs the same related test files by imports each time: with DSH_BENCH_IMPORTS_ONCE=1
        // the first related run stands for them (its time, its tests), and only breaking edits run them again.
        const once = process.env.DSH_BENCH_IMPORTS_ONCE === '1' && kind === 'same behaviour'
        t = performance.now()
        const byFiles = once ? first : await plain.measure(byImports, io)
        const filesMs = once ? withoutMs : performance.now() - t
        writeFileSync(abs, original)
        await mapped.restore()
        // Every failure the selection by imports finds that the module's tests did not have before, the map finds too.
        const mapKeys = new Set(byMap.problems.map(p => p.key))
        const agree = byFiles.problems.every(p => before.has(p.key) || mapKeys.has(p.key))
        same.push(agree)
        const fileKeys = new Set(byFiles.problems.map(p => p.key))
        const onlyFiles = [...fileKeys].filter(k => !mapKeys.has(k)).sort()
        const onlyMap = [...mapKeys].filter(k => !fileKeys.has(k)).sort()
        if (onlyFiles.length || onlyMap.length) {
          // Side by side: the failing ids only one selection reported (a pre-existing failure is one the module's related run had before any edit).
          const tag = (k: string) => `${k}${before.has(k) ? ' (failing before any edit)' : ''}`
          console.log(`\`${fn.name}\` ${kind}: failing ids only by imports (${onlyFiles.length}), only by the map (${onlyMap.length})`)
          for (const k of onlyFiles) console.log(`  - ${tag(k)}`)
          for (const k of onlyMap) console.log(`  + ${tag(k)}`)
        }
        const m = counted(byMap)
        const f = counted(byFiles)
        if (kind === 'same behaviour') {
          ratios.push(f.tests / Math.max(1, m.tests))
          times.map.push(mapMs)
          times.files.push(filesMs)
        }
        rows.push(`| \`${fn.name}\` ${kind} | ${f.files} / ${f.tests} / ${sec(filesMs)} | ${m.files} / ${m.tests} / ${sec(mapMs)} | ${byFiles.problems.length} / ${byMap.problems.length}${agree ? '' : ' MISSED'} | ${note} |`)
      }
    }
    console.log('| edit | by imports: files / tests / time | map: files / tests / time | failing (imports / map; the map missed none) | the map said |')
    console.log('|---|---|---|---|---|')
    for (const r of rows) console.log(r)
    console.log(`\nsame-behaviour body edits: median ${sec(median(times.files))} by imports → ${sec(median(times.map))} by the map; ${median(ratios).toFixed(1)}× fewer tests (median); the map found every new failure the selection by imports found in ${same.filter(Boolean).length} of ${same.length} judgements`)
    if (same.some(x => !x)) process.exitCode = 1
  } finally {
    writeFileSync(abs, original)
    await mapped.dispose()
    await plain.dispose()
  }
}
