import { watch } from 'chokidar'
import { writeFileSync, readFileSync, statSync, mkdtempSync } from 'node:fs'
const dir = mkdtempSync('/tmp/chk-')
const f = dir + '/c.yml'
writeFileSync(f, 'a')
const w = watch([f], { ignoreInitial: true, atomic: true })
let n = 0
w.on('all', (e) => { n++; console.log('event', e, Date.now() % 100000) })
w.on('raw', (e) => console.log('raw', e, Date.now() % 100000))
await new Promise(r => w.once('ready', r))
for (let i = 0; i < 5; i++) {
  writeFileSync(f, 'x'.repeat(10 + i))
  const s1 = statSync(f)
  await new Promise(r => setTimeout(r, 45))
  readFileSync(f, 'utf8')
  const s2 = statSync(f)
  console.log('mt', s1.mtimeMs, 'at after read', s2.atimeMs, 'mt', s2.mtimeMs)
}
await new Promise(r => setTimeout(r, 300))
console.log('events', n)
await w.close()
