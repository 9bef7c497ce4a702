import { createHash } from 'node:crypto'

/**
 * The canonical encoding hashes are computed over: JSON with object keys
 * sorted by UTF-16 code unit, no whitespace, arrays in order. Key order in
 * the stored line therefore does not matter, every value does.
 * @throws TypeError for values JSON cannot represent exactly (NaN, ±Infinity, bigint, functions).
 */
export function canonicalJson(value: unknown, omitKey?: string): string {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} has no JSON form`)
      return JSON.stringify(value)
    case 'object': {
      if (value === null) return 'null'
      if (Array.isArray(value)) return `[${value.map(item => canonicalJson(item)).join(',')}]`
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      let out = '{'
      for (const key of keys) {
        const v = record[key]
        if (v === undefined || key === omitKey) continue
        out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(v)}`
      }
      return out + '}'
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} has no JSON form`)
  }
}

/** Domain tag so a proof hash can never be mistaken for the hash of some other JSON. */
const DOMAIN = 'dsh-proofchain/1\n'

/** SHA-256 (hex) of a record's canonical encoding, every field except `hash`. */
export function hashRecord(record: object): string {
  return createHash('sha256').update(DOMAIN + canonicalJson(record, 'hash')).digest('hex')
}
