const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref] ?? whole
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10)
    // A reference to no character (or a surrogate) is kept as written rather than turned into U+FFFD.
    return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole
  })
}

/**
 * The text of an XML attribute value or element content: the five named
 * entities, every decimal and hexadecimal character reference, and
 * `<![CDATA[…]]>` sections (kept literally, their `&` not decoded).
 * Unknown named entities are kept as written.
 *
 * @example decodeXmlText('a &lt; b&#x2014;<![CDATA[x && y]]>') // 'a < b—x && y'
 */
export function decodeXmlText(text: string): string {
  let out = ''
  let at = 0
  for (;;) {
    const open = text.indexOf('<![CDATA[', at)
    if (open < 0) return out + decodeEntities(text.slice(at))
    const close = text.indexOf(']]>', open + 9)
    out += decodeEntities(text.slice(at, open))
    if (close < 0) return out + text.slice(open + 9)
    out += text.slice(open + 9, close)
    at = close + 3
  }
}
