import { readTextFile } from 'dsh-common'

/** One assistant step of a script. */
export interface ScriptStep {
  text?: string
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[]
}

/** A malformed script; the message names the file and line. `code` is stable. */
export class ScriptError extends Error {
  readonly code = 'SCRIPT'
}

function fail(file: string, line: number, why: string): never {
  throw new ScriptError(`${file}:${line}: ${why}`)
}

/**
 * Parse a JSON Lines script: one assistant step per non-blank line,
 * `{"text"?: string, "toolCalls"?: [{"id"?: string, "name": string, "arguments": object}]}`.
 * @throws ScriptError naming the file and line of the first malformed line.
 */
export function parseScript(text: string, file = '<script>'): ScriptStep[] {
  const steps: ScriptStep[] = []
  text.split('\n').forEach((raw, i) => {
    const line = i + 1
    if (!raw.trim()) return
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      fail(file, line, `not valid JSON (${(error as Error).message})`)
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) fail(file, line, 'expected a JSON object')
    const step = value as Record<string, unknown>
    for (const key of Object.keys(step)) {
      if (key !== 'text' && key !== 'toolCalls') fail(file, line, `unknown field "${key}" (expected text, toolCalls)`)
    }
    if (step.text !== undefined && typeof step.text !== 'string') fail(file, line, '"text" must be a string')
    if (step.toolCalls !== undefined) {
      if (!Array.isArray(step.toolCalls)) fail(file, line, '"toolCalls" must be an array')
      step.toolCalls.forEach((call: unknown, j: number) => {
        const c = call as Record<string, unknown>
        if (!c || typeof c !== 'object') fail(file, line, `toolCalls[${j}] must be an object`)
        if (typeof c.name !== 'string' || !c.name) fail(file, line, `toolCalls[${j}].name must be a non-empty string`)
        if (!c.arguments || typeof c.arguments !== 'object' || Array.isArray(c.arguments)) fail(file, line, `toolCalls[${j}].arguments must be an object`)
        if (c.id !== undefined && typeof c.id !== 'string') fail(file, line, `toolCalls[${j}].id must be a string`)
      })
    }
    steps.push(step as ScriptStep)
  })
  return steps
}

/** Read and parse a script file (see {@link parseScript}). */
export function loadScript(file: string): ScriptStep[] {
  return parseScript(readTextFile(file, 'script', message => new ScriptError(message)), file)
}
