// dsh-llm-openai: what our stream handling costs against the naive ways.
//  1. Tool-call arguments: concatenate deltas and parse once at the end (ours)
//     vs "try JSON.parse after every delta to see whether it is complete".
//  2. SSE framing of a stream delivered in small network pieces: our
//     incremental parser (CR/LF/CRLF, comments, multi-line data) vs the
//     usual split-on-blank-line loop that handles LF only.
//  3. End to end on 127.0.0.1: a long answer through the adapter vs reading
//     the same response body raw (the adapter's overhead over the wire).
import { Config, createOpenAIAdapter, SseParser, AnswerAssembler } from 'dsh-llm-openai'
import { chunk, startProtocolServer, textStream, toolCallStream } from 'dsh-llm-openai/test-server'
import type { Session } from 'dsh-session'

const runs = Number(process.env.DSH_BENCH_RUNS ?? 5)
const enc = new TextEncoder()

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

async function timed(fn: () => unknown, n = runs): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    await fn()
    times.push(performance.now() - start)
  }
  return median(times)
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(2))
const rows: string[] = []
const row = (what: string, ours: number, naive: number, size: string) => {
  rows.push(`| ${what} | ${size} | ${fmt(ours)} | ${fmt(naive)} | ${(naive / ours).toFixed(1)}× |`)
}

// 1. A write_file call with 40 KB of content, in 5-character deltas.
const content = Array.from({ length: 1000 }, (_, i) => `export const value${i} = ${i} // line ${i}\n`).join('').slice(0, 40_000)
const events = toolCallStream([{ id: 'c', name: 'write_file', arguments: { path: 'src/big.ts', content } }], { size: 5 })
  .map((c, i) => ({ data: JSON.stringify(c), line: i * 2 + 1 }))
const ours1 = await timed(() => {
  const a = new AnswerAssembler('bench', 0)
  for (const e of events) a.accept(e)
  return a.complete()
})
const naive1 = await timed(() => {
  let args = ''
  let parsed: unknown
  for (const e of events) {
    const delta = (JSON.parse(e.data) as { choices: { delta: { tool_calls?: { function?: { arguments?: string } }[] } }[] }).choices[0]!.delta.tool_calls?.[0]?.function?.arguments
    if (!delta) continue
    args += delta
    try { parsed = JSON.parse(args) } catch { /* not complete yet */ }
  }
  return parsed
}, 1)
row('tool-call arguments (40 KB in 5-char deltas)', ours1, naive1, `${events.length} deltas`)

// 2. A long text answer's SSE bytes, delivered 64 bytes at a time.
const body = enc.encode([...textStream('word '.repeat(40_000), 4), chunk({}, 'stop')].map(c => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n')
const pieces: Uint8Array[] = []
for (let i = 0; i < body.length; i += 64) pieces.push(body.subarray(i, i + 64))
const ours2 = await timed(() => {
  const p = new SseParser()
  let n = 0
  for (const piece of pieces) n += p.push(piece).length
  return n + p.end().length
})
const naive2 = await timed(() => {
  const decoder = new TextDecoder()
  let rest = ''
  let n = 0
  for (const piece of pieces) {
    const parts = (rest + decoder.decode(piece, { stream: true })).split('\n\n')
    rest = parts.pop()!
    for (const part of parts) if (part.startsWith('data: ')) n++
  }
  return n
})
row('SSE framing (64-byte network pieces)', ours2, naive2, `${(body.length / 1e6).toFixed(1)} MB`)

// 3. End to end over 127.0.0.1.
const answer = textStream('token '.repeat(50_000), 6)
const server = await startProtocolServer(() => ({ stream: answer }))
const adapter = createOpenAIAdapter(Config({ baseUrl: server.baseUrl, model: 'bench', includeUsage: false }))
const session = { id: 'bench' } as Session
const ours3 = await timed(async () => {
  let n = 0
  for await (const c of adapter.stream({ session, messages: [{ role: 'user', content: 'go' }], tools: [], requestIndex: 0 }, new AbortController().signal)) {
    if (c.type === 'text') n += c.text.length
  }
  return n
})
const raw3 = await timed(async () => {
  const res = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  return (await res.text()).length
})
await server.close()
rows.push(`| end to end, ${answer.length} deltas on 127.0.0.1 | adapter ${fmt(ours3)} ms | raw body read ${fmt(raw3)} ms | overhead ${(ours3 / raw3).toFixed(2)}× |`)

console.log(`## dsh-llm-openai (median of ${runs}; the quadratic tool-call row: 1 run)\n`)
console.log('| case | size | ours (ms) | naive (ms) | naive / ours |')
console.log('|---|---|---|---|---|')
console.log(rows.join('\n'))
