import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// How the sources are filed (docs/architecture.md, "Extending"): imports only point down.
//   src/*.ts            the judging core; only index.ts and profiles.ts reach into a folder (and config.ts, for each toolchain's options.ts)
//   src/modes/          style and coverage: the core only
//   src/toolchains/*.ts the toolchain contract and the shared runner mechanics: the core and modes only
//   src/toolchains/js/  what the JavaScript/TypeScript toolchains share (import scan, comments, workspace packages): imports as a toolchain does; not one itself
//   src/toolchains/<x>/ one toolchain: the core, modes, the two shared modules, js/, its own folder — never another toolchain

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap(f => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mjs)$/.test(f) ? [p] : []
  })
}

/** Every relative import of every source file, as `from -> to` (both relative to src/). */
function edges(): { from: string; to: string }[] {
  return files(src).flatMap(file => {
    const text = readFileSync(file, 'utf8')
    return [...text.matchAll(/^\s*(?:import|export|\})[^'\n]*?(?:\bfrom\s*|^\s*import\s*)'(\.{1,2}\/[^']+)'/gm)].map(m => ({
      from: relative(src, file),
      to: relative(src, resolve(dirname(file), m[1]!)),
    }))
  })
}

/** The folder the JavaScript/TypeScript toolchains share: not a toolchain (no index.ts, not listed). */
const FAMILY = 'toolchains/js'

const folder = (p: string) => (p.includes('/') ? p.split('/').slice(0, -1).join('/') : '')

describe('dsh-dstvalid source layout', () => {
  it('imports point down: core ← modes ← toolchain contract ← one toolchain ← profiles', () => {
    const wrong = edges().filter(({ from, to }) => {
      const f = folder(from)
      const t = folder(to)
      // config.ts composes the toolchains' own options (`toolchains/<name>/options.ts`) into the one Config.
      if (f === '') return !['index.ts', 'profiles.ts'].includes(from) && t !== '' && !(from === 'config.ts' && /^toolchains\/[^/]+\/options\.ts$/.test(to))
      if (f === 'modes') return t !== '' && t !== 'modes'
      if (f === 'toolchains') return t !== '' && t !== 'modes' && t !== 'toolchains'
      if (f === FAMILY) return t !== '' && t !== 'modes' && t !== 'toolchains' && t !== f
      return t !== '' && t !== 'modes' && t !== 'toolchains' && t !== FAMILY && t !== f
    })
    expect(wrong.map(e => `${e.from} -> ${e.to}`)).toEqual([])
  })

  it('every toolchain folder has an index.ts that profiles.ts lists', () => {
    const profiles = readFileSync(join(src, 'profiles.ts'), 'utf8')
    const folders = readdirSync(join(src, 'toolchains')).filter(f => statSync(join(src, 'toolchains', f)).isDirectory() && `toolchains/${f}` !== FAMILY)
    const unlisted = folders.filter(f => !profiles.includes(`from './toolchains/${f}/index.ts'`) || !existsSync(join(src, 'toolchains', f, 'index.ts')))
    expect(unlisted).toEqual([])
  })
})
