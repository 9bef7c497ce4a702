import type Schema from '@deepseek-ai/schemastery'

/*
 * Each plugin's schemastery `Config` is the one source of its options: the
 * type is derived from it (`export type Config = Schemastery.TypeT<typeof
 * Config>`), and the README table is generated from it (`docs:check`).
 */

/**
 * An option with no default: the plugin receives `undefined` when it is
 * not set. Schemastery types such an option as always present; wrapping it
 * makes the derived Config type say what really arrives.
 *
 * @example
 * export const Config = Schema.object({
 *   path: optional(Schema.string().description('Path of a script.')),
 * })
 * export type Config = Schemastery.TypeT<typeof Config> // { path: string | undefined }
 */
export function optional<S, T>(schema: Schema<S, T>): Schema<S | undefined, T | undefined> {
  return schema as unknown as Schema<S | undefined, T | undefined>
}

/**
 * `obj` without its keys whose value is `undefined`: for records written as
 * JSON or compared deeply, where `{ step: undefined }` must be `{}`.
 *
 * @example
 * definedOnly({ step: exec.step, turn: exec.turn }) // {} when both are undefined
 */
export function definedOnly<T extends object>(obj: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(obj).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }
}
