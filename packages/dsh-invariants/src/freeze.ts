/**
 * Deep-freeze a JSON-like value in place and return it, so mutating it (in
 * strict-mode code: every ES module) throws a `TypeError`.
 *
 * An object that is already frozen is taken as already deep-frozen and not
 * visited again: events share objects (an `assistant/message` holds the very
 * call objects later logged as `tool/call`), and this keeps the cost to one
 * visit per object and makes cycles terminate. Typed arrays and other
 * buffer views cannot be frozen and are left as they are.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) freezeObject(value)
  return value
}

function freezeObject(object: object): void {
  if (ArrayBuffer.isView(object)) return
  Object.freeze(object)
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      const item: unknown = object[i]
      if (item !== null && typeof item === 'object' && !Object.isFrozen(item)) freezeObject(item)
    }
    return
  }
  for (const key in object) {
    const item: unknown = (object as Record<string, unknown>)[key]
    if (item !== null && typeof item === 'object' && !Object.isFrozen(item)) freezeObject(item)
  }
}
