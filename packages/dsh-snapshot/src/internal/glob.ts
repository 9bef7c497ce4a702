/**
 * A small gitignore-flavoured glob matcher for `captureDir` skips.
 * `*` and `?` stay within one path segment, `**` spans segments. A pattern
 * without a `/` (other than a trailing one) matches a name at any depth;
 * one with a `/` is anchored at the workspace root. A trailing `/` is
 * dropped (directories and files match alike; a matched directory is
 * skipped with everything below it).
 */
export type PathMatcher = (relPosix: string) => boolean

function segmentToRegex(glob: string): string {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` spans zero or more whole segments; a bare `**` anything.
        if (glob[i + 2] === '/') {
          out += '(?:[^/]*/)*'
          i += 2
        } else {
          out += '.*'
          i += 1
        }
      } else {
        out += '[^/]*'
      }
    } else if (c === '?') {
      out += '[^/]'
    } else {
      out += c.replace(/[\\^$.+()|{}[\]]/g, '\\$&')
    }
  }
  return out
}

export function compileGlob(pattern: string): PathMatcher {
  let p = pattern.trim().replace(/\\/g, '/')
  if (p.endsWith('/')) p = p.slice(0, -1)
  const anchored = p.includes('/')
  if (p.startsWith('/')) p = p.slice(1)
  if (p.startsWith('./')) p = p.slice(2)
  const body = segmentToRegex(p)
  const re = new RegExp(anchored ? `^${body}$` : `(?:^|/)${body}$`)
  return rel => re.test(rel)
}

/** One matcher for many globs (matches when any does). */
export function compileGlobs(patterns: readonly string[]): PathMatcher {
  const matchers = patterns.filter(p => p.trim()).map(compileGlob)
  return rel => matchers.some(m => m(rel))
}
