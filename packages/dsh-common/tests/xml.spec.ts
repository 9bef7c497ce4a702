import { describe, expect, it } from 'vitest'
import { decodeXmlText } from 'dsh-common'

describe('decodeXmlText', () => {
  it('decodes the named entities, every decimal and hex reference, and leaves unknown names', () => {
    expect(decodeXmlText('a &lt; b &amp;&amp; c &gt; d &quot;e&quot; &apos;f&apos;')).toBe(`a < b && c > d "e" 'f'`)
    expect(decodeXmlText('line1&#10;line2&#9;tab&#xD;&#x2014;&#128512;')).toBe('line1\nline2\ttab\r—😀')
    expect(decodeXmlText('&nbsp; &#xD800; &#1114112;')).toBe('&nbsp; &#xD800; &#1114112;')
  })

  it('decodes once: &amp;lt; is the text &lt;', () => {
    expect(decodeXmlText('&amp;lt;')).toBe('&lt;')
  })

  it('keeps CDATA sections literally and decodes around them', () => {
    expect(decodeXmlText('x &lt; <![CDATA[assert a && b < c &amp;]]> &gt; y')).toBe('x < assert a && b < c &amp; > y')
    expect(decodeXmlText('<![CDATA[a]]><![CDATA[]]]]><![CDATA[>]]>')).toBe('a]]>')
    expect(decodeXmlText('<![CDATA[unterminated &amp;')).toBe('unterminated &amp;')
  })
})
