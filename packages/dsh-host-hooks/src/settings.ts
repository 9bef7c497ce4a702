import { existsSync, readFileSync } from 'node:fs'

/** A file an adapter writes, with its content before and after (undefined: absent). */
export interface ConfigEdit {
  /** Absolute path. */
  file: string
  before: string | undefined
  after: string | undefined
}

/** A JSON object as read from an agent's configuration file. */
export type JsonObject = Record<string, unknown>

/** An agent's configuration file that cannot be merged with: nothing was written. */
export class SettingsError extends Error {
  readonly code = 'HOOKS_SETTINGS'
}

/** A configuration file's text (undefined: absent) and its parsed object (empty when absent). */
function readSettings(file: string): { text: string | undefined; value: JsonObject } {
  if (!existsSync(file)) return { text: undefined, value: {} }
  const text = readFileSync(file, 'utf8')
  if (!text.trim()) return { text, value: {} }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new SettingsError(`${file} is not valid JSON (${(error as Error).message}); fix it first, nothing was changed`)
  }
  if (!isObject(value)) throw new SettingsError(`${file} does not hold a JSON object; fix it first, nothing was changed`)
  return { text, value }
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `value` as JSON in the style of `like` (its indentation and final newline; two spaces and a newline by default). */
function formatSettings(value: JsonObject, like: string | undefined): string {
  const indent = like ? /^[{[]\r?\n([ \t]+)/.exec(like)?.[1] ?? '  ' : '  '
  const newline = like === undefined || like.endsWith('\n') ? '\n' : ''
  return JSON.stringify(value, null, indent) + newline
}

/**
 * A JSON configuration file after `change`, as an edit (before/after text):
 * unchanged text when the value is the same; with `removing`, an object left
 * empty is no file at all.
 */
export function editJson(file: string, change: (value: JsonObject) => JsonObject, removing = false): ConfigEdit {
  const { text, value } = readSettings(file)
  const next = change(value)
  if (removing && Object.keys(next).length === 0) return { file, before: text, after: undefined }
  if (text !== undefined && JSON.stringify(next) === JSON.stringify(value)) return { file, before: text, after: text }
  return { file, before: text, after: formatSettings(next, text) }
}

/** One hook command to merge under `hooks[event]`, in the Claude Code / Codex / Gemini shape. */
export interface HookGroupSpec {
  event: string
  matcher?: string
  command: string
  /** In the agent's own unit (seconds for Claude Code and Codex, milliseconds for Gemini CLI). */
  timeout: number
}

type HookGroup = { matcher?: string; hooks?: unknown[]; [key: string]: unknown }

function commandOf(hook: unknown): string | undefined {
  return isObject(hook) && typeof hook.command === 'string' ? hook.command : undefined
}

/**
 * Merge `specs` into `settings.hooks` (`{ Event: [{ matcher, hooks: [{ type: 'command', command, timeout }] }] }`):
 * the user's own groups stay as they are, in their order; a group of ours
 * already there is replaced in place; a new one is appended. Idempotent.
 * @throws SettingsError when `hooks` (or an event's list) is not the shape the agent reads.
 */
export function mergeHookGroups(settings: JsonObject, specs: readonly HookGroupSpec[], isOurs: (command: string) => boolean): JsonObject {
  const hooks = settings.hooks === undefined ? {} : settings.hooks
  if (!isObject(hooks)) throw new SettingsError('"hooks" is not an object; fix it first, nothing was changed')
  const next: JsonObject = { ...hooks }
  for (const spec of specs) {
    const list = next[spec.event] === undefined ? [] : next[spec.event]
    if (!Array.isArray(list)) throw new SettingsError(`"hooks.${spec.event}" is not a list; fix it first, nothing was changed`)
    const group: HookGroup = {
      ...(spec.matcher !== undefined ? { matcher: spec.matcher } : {}),
      hooks: [{ type: 'command', command: spec.command, timeout: spec.timeout }],
    }
    const at = list.findIndex(g => isObject(g) && Array.isArray(g.hooks) && g.hooks.some(h => isOurs(commandOf(h) ?? '')))
    next[spec.event] = at === -1 ? [...list, group] : list.map((g, i) => (i === at ? group : g))
  }
  return { ...settings, hooks: next }
}

/**
 * Take every hook command of ours out of `settings.hooks`; a group, an
 * event list or `hooks` itself left empty by that goes too. The user's own
 * entries stay as they are.
 */
export function removeHookGroups(settings: JsonObject, isOurs: (command: string) => boolean): JsonObject {
  if (!isObject(settings.hooks)) return settings
  const hooks: JsonObject = {}
  for (const [event, list] of Object.entries(settings.hooks)) {
    if (!Array.isArray(list)) {
      hooks[event] = list
      continue
    }
    const kept: unknown[] = []
    for (const group of list) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        kept.push(group)
        continue
      }
      const rest = group.hooks.filter(h => !isOurs(commandOf(h) ?? ''))
      if (rest.length === group.hooks.length) kept.push(group)
      else if (rest.length) kept.push({ ...group, hooks: rest })
    }
    if (kept.length) hooks[event] = kept
  }
  const { hooks: _old, ...rest } = settings
  return Object.keys(hooks).length ? { ...rest, hooks } : rest
}

/** `settings` with `value` added to the string list at `path` (created when absent) unless it is there. */
export function addToList(settings: JsonObject, path: readonly string[], value: string): JsonObject {
  return updateAt(settings, path, list => {
    const items = list === undefined ? [] : list
    if (!Array.isArray(items)) throw new SettingsError(`"${path.join('.')}" is not a list; fix it first, nothing was changed`)
    return items.includes(value) ? items : [...items, value]
  })
}

/** `settings` without `value` in the list at `path`; a list (and objects on the path) left empty by that go too. */
export function removeFromList(settings: JsonObject, path: readonly string[], value: string): JsonObject {
  return updateAt(settings, path, list => {
    if (!Array.isArray(list)) return list
    const rest = list.filter(v => v !== value)
    return rest.length ? rest : undefined
  })
}

/** `settings` with the object entry `path` set to `value`, or taken out (undefined); empty parents go with it. */
export function setEntry(settings: JsonObject, path: readonly string[], value: unknown): JsonObject {
  return updateAt(settings, path, () => value)
}

function updateAt(obj: JsonObject, path: readonly string[], update: (current: unknown) => unknown): JsonObject {
  const [key, ...rest] = path
  if (key === undefined) return obj
  let value: unknown
  if (rest.length) {
    const child = obj[key] === undefined ? {} : obj[key]
    if (!isObject(child)) throw new SettingsError(`"${key}" is not an object; fix it first, nothing was changed`)
    const next = updateAt(child, rest, update)
    value = Object.keys(next).length ? next : undefined
  } else {
    value = update(obj[key])
  }
  if (value === obj[key]) return obj
  const { [key]: _old, ...others } = obj
  return value === undefined ? others : { ...obj, [key]: value }
}
