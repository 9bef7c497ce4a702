import type { FinishReason, ModelChunk } from 'dsh-llm'
import { OpenAIError } from './errors.ts'
import type { SseEvent } from './sse.ts'

interface PartialCall {
  index: number
  id?: string
  name?: string
  args: string
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v)

function snippet(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ')
  return JSON.stringify(flat.length > max ? flat.slice(0, max) + '…' : flat)
}

/**
 * A tool call's argument text as one JSON object, or the text itself and why
 * it is not one (for the model: it sent it). `cut`: the answer hit its token
 * limit.
 */
function readArguments(text: string, cut: boolean): { args: unknown; invalid?: string } {
  if (!text.trim()) return { args: {} }
  let args: unknown
  try {
    args = JSON.parse(text)
  } catch (error) {
    const why = cut ? 'the answer was cut off at its token limit, finish_reason "length", before they were complete' : (error as Error).message
    return { args: text, invalid: `the arguments are not valid JSON (${why}): ${snippet(text)}` }
  }
  if (!isObject(args)) return { args: text, invalid: `the arguments are not a JSON object: ${snippet(text)}` }
  return { args }
}

/** The message of an error object in any of the shapes servers use. */
export function errorText(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() || undefined
  if (!isObject(body)) return undefined
  const e = body.error
  if (typeof e === 'string') return e
  if (isObject(e) && typeof e.message === 'string') return e.message
  if (typeof body.message === 'string') return body.message
  if (typeof body.detail === 'string') return body.detail
  return undefined
}

/**
 * Assembles one streamed answer: text deltas pass straight through; tool
 * calls are put together from their argument deltas (several calls,
 * interleaved by `index`) and released, in index order, with usage and the
 * finish reason once the stream is complete. Anything off-protocol throws
 * an `OpenAIError` naming what was malformed.
 */
export class AnswerAssembler {
  /** Deltas that carried content (text, reasoning or tool calls): once > 0, a retry would repeat output. */
  tokens = 0
  /** `data: [DONE]` arrived. */
  done = false
  private readonly _calls = new Map<number, PartialCall>()
  private _lastIndex = -1
  private _usage?: { inputTokens: number; outputTokens: number }
  private _finish?: string

  constructor(private readonly source: string, private readonly requestIndex: number) {}

  private malformed(what: string): never {
    throw new OpenAIError(`malformed stream from ${this.source}: ${what}`, 'malformed')
  }

  /** One server-sent event; returns the text chunks it carried. */
  accept(event: SseEvent): ModelChunk[] {
    if (this.done) return []
    const data = event.data.trim()
    if (data === '[DONE]') {
      this.done = true
      return []
    }
    let json: unknown
    try {
      json = JSON.parse(data)
    } catch {
      if (event.event === 'error') throw new OpenAIError(`${this.source} reported an error mid-stream: ${data}`, 'model')
      this.malformed(`line ${event.line} is not JSON: ${snippet(data)}`)
    }
    if (!isObject(json)) this.malformed(`line ${event.line} is not a JSON object: ${snippet(data)}`)
    if (event.event === 'error' || json.error !== undefined) {
      throw new OpenAIError(`${this.source} reported an error mid-stream: ${errorText(json) ?? snippet(data)}`, 'model')
    }
    if (isObject(json.usage)) this.takeUsage(json.usage)
    if (json.choices === undefined || json.choices === null) return []
    if (!Array.isArray(json.choices)) this.malformed(`line ${event.line}: "choices" is not a list`)
    const out: ModelChunk[] = []
    for (const choice of json.choices) {
      if (!isObject(choice)) this.malformed(`line ${event.line}: a choice is not an object`)
      if ((choice.index ?? 0) !== 0) continue
      const delta = choice.delta ?? choice.message
      if (delta !== undefined && delta !== null) {
        if (!isObject(delta)) this.malformed(`line ${event.line}: "delta" is not an object`)
        this.takeDelta(delta, event.line, out)
      }
      if (typeof choice.finish_reason === 'string') this._finish = choice.finish_reason
    }
    return out
  }

  /** A whole (non-streamed) completion, for a server that ignored `stream: true`. */
  acceptCompletion(json: unknown): ModelChunk[] {
    if (!isObject(json) || !Array.isArray(json.choices)) this.malformed('the JSON answer has no "choices" list')
    const out = this.accept({ data: JSON.stringify(json), line: 1 })
    this.done = true
    return out
  }

  private takeUsage(usage: Json) {
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
    this._usage = { inputTokens: n(usage.prompt_tokens), outputTokens: n(usage.completion_tokens) }
  }

  private takeDelta(delta: Json, line: number, out: ModelChunk[]) {
    if (typeof delta.content === 'string' && delta.content) {
      this.tokens++
      out.push({ type: 'text', text: delta.content })
    }
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) this.tokens++
    const calls = delta.tool_calls
    if (calls === undefined || calls === null) return
    if (!Array.isArray(calls)) this.malformed(`line ${line}: "tool_calls" is not a list`)
    for (const raw of calls) {
      if (!isObject(raw)) this.malformed(`line ${line}: a tool call delta is not an object`)
      this.tokens++
      const call = this.slot(raw, line)
      if (typeof raw.id === 'string' && raw.id && !call.id) call.id = raw.id
      const fn = raw.function
      if (fn === undefined || fn === null) continue
      if (!isObject(fn)) this.malformed(`line ${line}: "function" of tool call ${call.index} is not an object`)
      // Some servers repeat the name in every delta; it is never split.
      if (typeof fn.name === 'string' && fn.name && !call.name) call.name = fn.name
      if (typeof fn.arguments === 'string') call.args += fn.arguments
      else if (isObject(fn.arguments) && !call.args) call.args = JSON.stringify(fn.arguments)
      else if (fn.arguments !== undefined && fn.arguments !== null) {
        this.malformed(`line ${line}: arguments of tool call ${call.index} are neither text nor an object`)
      }
    }
  }

  /** The call a delta belongs to: by `index`, or (servers that omit it) by id, else the last one. */
  private slot(raw: Json, line: number): PartialCall {
    let index: number
    if (raw.index !== undefined && raw.index !== null) {
      if (!Number.isInteger(raw.index) || (raw.index as number) < 0) this.malformed(`line ${line}: tool call index ${JSON.stringify(raw.index)} is not a natural number`)
      index = raw.index as number
    } else {
      const byId = typeof raw.id === 'string' && raw.id ? [...this._calls.values()].find(c => c.id === raw.id) : undefined
      index = byId ? byId.index : typeof raw.id === 'string' && raw.id ? this._lastIndex + 1 : Math.max(this._lastIndex, 0)
    }
    this._lastIndex = Math.max(this._lastIndex, index)
    let call = this._calls.get(index)
    if (!call) this._calls.set(index, call = { index, args: '' })
    return call
  }

  /**
   * The stream ended: the tool calls (index order), usage, and the finish.
   * @throws OpenAIError when the answer is incomplete or a call is malformed.
   */
  complete(): ModelChunk[] {
    if (!this.done && this._finish === undefined) {
      throw new OpenAIError(`the stream from ${this.source} ended before the answer was complete (no finish_reason, no [DONE])`, 'disconnect', true)
    }
    const out: ModelChunk[] = []
    const cut = this._finish === 'length' ? ' (the answer was cut off: finish_reason "length"; raise maxTokens)' : ''
    for (const call of [...this._calls.values()].sort((a, b) => a.index - b.index)) {
      if (!call.name) this.malformed(`tool call ${call.index} has no function name${cut}`)
      const id = call.id ?? `call_${this.requestIndex}_${call.index}`
      // Arguments that are not one JSON object go back to the model as a tool
      // error (real models send them); the stream itself was sound.
      const { args, invalid } = readArguments(call.args, this._finish === 'length')
      out.push({ type: 'tool-call', id, name: call.name, arguments: args, ...(invalid ? { invalid } : {}) })
    }
    if (this._usage) out.push({ type: 'usage', ...this._usage })
    let reason: FinishReason = this._finish ?? (this._calls.size ? 'tool_calls' : 'stop')
    if (reason === 'function_call' || (reason === 'stop' && this._calls.size)) reason = 'tool_calls'
    out.push({ type: 'finish', reason })
    return out
  }
}
