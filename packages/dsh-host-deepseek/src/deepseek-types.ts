/**
 * The few shapes of the DeepSeek Harness (0.1.0-rc.8) this host reads and
 * writes, written down structurally: the harness's own type packages are not
 * dependencies of this repository (they are installed with the harness).
 */

export interface DsTextBlock { type: 'text'; text: string }
export interface DsToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }
export interface DsToolResultBlock { type: 'tool-result'; toolCallId: string; content: DsBlock[]; isError?: boolean }
export type DsBlock = DsTextBlock | DsToolCallBlock | DsToolResultBlock | { type: string }

export type DsMessageSource = { kind: 'user' } | { kind: 'plugin'; plugin: string } | { kind: string }

/** An identified, frozen user-role message (`createUserMessage` of `@deepseek-ai/dsh-llm/message`). */
export interface DsUserMessage {
  readonly id: string
  readonly role: 'user'
  readonly content: readonly DsBlock[]
  readonly source: DsMessageSource
}

export interface DsSessionEvent {
  readonly seq: number
  readonly type: string
  readonly data: unknown
}

export interface DsSession {
  readonly id: string
  readonly header: { readonly cwd?: string }
  readonly events: readonly DsSessionEvent[]
}

export interface DsSessions {
  list(): DsSession[]
}

export interface DsAgent {
  readonly id: string
  readonly session: DsSession
}

/** One call in the harness's tool pipeline (`ToolExecution`). */
export interface DsToolExecution {
  readonly token?: symbol
  readonly callId: string
  readonly name: string
  readonly arguments: unknown
  readonly agent?: DsAgent
  readonly signal?: AbortSignal
}

export type DsToolResult =
  | { readonly isError: false; readonly value: unknown; readonly content: readonly DsBlock[] }
  | { readonly isError: true; readonly error: { message: string }; readonly content: readonly DsBlock[] }

export type DsPostDecision =
  | { kind: 'accept'; content?: DsBlock[]; additionalContexts?: DsUserMessage[] }
  | { kind: 'block'; feedback: DsBlock[]; additionalContexts?: DsUserMessage[] }

export type DsPreStepDecision = { kind: 'reject' } | { kind: 'enter'; messages: DsUserMessage[] }

/** A tool definition for the harness's registry: schema, canonical output, body. */
export interface DsToolDefinition {
  name: string
  description: string
  parameters: object
  output: { schema: object; render(args: unknown, value: unknown): DsBlock[] }
  execute(args: unknown, exec: DsToolExecution): Promise<unknown>
}

export interface DsTools {
  register(def: DsToolDefinition): () => void
}

/** The text of a harness content list (text blocks, and text inside tool results). */
export function textOf(blocks: readonly DsBlock[] | undefined): string {
  const out: string[] = []
  for (const block of blocks ?? []) {
    if (block.type === 'text') out.push((block as DsTextBlock).text)
    else if (block.type === 'tool-result') out.push(textOf((block as DsToolResultBlock).content))
  }
  return out.join('\n')
}
