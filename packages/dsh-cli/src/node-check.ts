import { readFileSync } from 'node:fs'

/**
 * The oldest Node.js dsh runs on, from dsh-cli's `engines` (`>=20.6.0`:
 * `module.register`, which tsx's loader and the dev harness's reload hook
 * use, is 20.6; execa 9 needs 20.5). Only `node:` imports, so it runs
 * before anything that would fail on an older Node.
 */
export function nodeFloor(): string {
  const engines = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node
  return engines.replace(/^>=\s*/, '')
}

/** Why this Node is too old, as one line; undefined when it will do. */
export function nodeTooOld(version: string = process.versions.node, floor: string = nodeFloor()): string | undefined {
  const have = version.split('.').map(n => Number.parseInt(n, 10) || 0)
  const need = floor.split('.').map(n => Number.parseInt(n, 10) || 0)
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== (need[i] ?? 0)) {
      return (have[i] ?? 0) > (need[i] ?? 0) ? undefined : `dsh: Node.js ${floor} or newer is needed (this is ${version})`
    }
  }
  return undefined
}
