/**
 * A scripted model speaking the Gemini API as Gemini CLI calls it
 * (`GOOGLE_GEMINI_BASE_URL`): each `…:streamGenerateContent` gets the next
 * step as one server-sent event (text and `functionCall` parts, `STOP`);
 * the CLI's side requests (`…:generateContent` for its next-speaker and
 * routing checks, `…:countTokens`) get fixed answers and consume no step.
 * Past the script's end it answers "Script finished.".
 */
import { notFound, type AgentStep, type ModelReply, type ModelRequest } from './server.ts'

const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }

function candidate(parts: object[]): object {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata }
}

/** Answer Gemini API requests from `steps`, one step per streamed request. */
export function geminiModel(steps: readonly AgentStep[]): (request: ModelRequest) => ModelReply {
  let n = 0
  return request => {
    const path = request.path.split('?')[0]!
    if (request.method === 'POST' && path.endsWith(':streamGenerateContent')) {
      const step = steps[n++] ?? { text: 'Script finished.' }
      const parts: object[] = step.text ? [{ text: step.text }] : []
      for (const call of step.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.arguments } })
      return { sse: [{ data: { ...candidate(parts), modelVersion: 'scripted' } }] }
    }
    if (request.method === 'POST' && path.endsWith(':generateContent')) {
      return { status: 200, json: candidate([{ text: JSON.stringify({ reasoning: 'scripted', next_speaker: 'user' }) }]) }
    }
    if (request.method === 'POST' && path.endsWith(':countTokens')) return { status: 200, json: { totalTokens: 10 } }
    return notFound(request)
  }
}

interface Content {
  role?: string
  parts?: { text?: string; functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> } }[]
}

function contents(request: ModelRequest): Content[] {
  const value = (request.body as { contents?: unknown } | undefined)?.contents
  return Array.isArray(value) ? (value as Content[]) : []
}

/** Whether a request is one of the turn's streamed model requests (not a side check). */
export function isGeminiTurnRequest(request: ModelRequest): boolean {
  return request.path.split('?')[0]!.endsWith(':streamGenerateContent')
}

/** The function responses a Gemini request carries: the tool's name and its `response` object. */
export function geminiFunctionResponses(request: ModelRequest): { name: string; response: Record<string, unknown> }[] {
  return contents(request).flatMap(c => (c.parts ?? []).flatMap(p => (p.functionResponse ? [{ name: p.functionResponse.name ?? '', response: p.functionResponse.response ?? {} }] : [])))
}

/** The text parts of a Gemini request's user contents (hooks' additional context arrives among them). */
export function geminiUserTexts(request: ModelRequest): string[] {
  return contents(request).filter(c => c.role === 'user').flatMap(c => (c.parts ?? []).flatMap(p => (typeof p.text === 'string' ? [p.text] : [])))
}
