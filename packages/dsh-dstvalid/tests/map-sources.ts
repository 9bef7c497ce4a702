/** The two modules of the map specs' fixtures: src/util.ts (`splitPath`, `shout`) and src/label.ts, which uses both. */
export const util = `export function splitPath(path: string): string[] {
  return path.split('/').filter(part => part.length > 0)
}

export function shout(text: string): string {
  return text.toUpperCase()
}
`

export const label = `import { shout, splitPath } from './util.ts'

export function label(name: string): string {
  return shout(name)
}

export function depth(path: string): number {
  return splitPath(path).length
}
`
