import type { Session } from 'dsh-session'

/** What every tool call returns. `isError` results are shown to the model as failures. */
export interface ToolResult {
  content: string
  isError?: boolean
  /** For shell tools: the command's exit code (`null` when killed by a signal or timeout). */
  exitCode?: number | null
}

/** How a tool affects the workspace; the guards key on this, never on tool names. */
export type ToolEffects = 'read' | 'write' | 'shell'

/** A JSON schema object describing a tool's arguments. */
export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  description?: string
  additionalProperties?: boolean | JsonSchema
  enum?: unknown[]
  [key: string]: unknown
}

/** One tool call on its way through the `tools/execute` waterfall. */
export interface ToolExecution<A = unknown> {
  session: Session
  callId: string
  name: string
  arguments: A
  /** The definition, when the tool exists. */
  tool?: ToolDefinition<A>
  /** The agent's turn and step numbers, when run by the loop. */
  turn?: number
  step?: number
  signal?: AbortSignal
}

export interface ToolDefinition<A = unknown> {
  name: string
  description: string
  parameters: JsonSchema
  effects: ToolEffects
  /**
   * For `effects: 'write'`: every path the call may create, modify or
   * delete, as given (relative to the workspace or absolute). Guards capture
   * and check exactly these.
   */
  paths?(args: A): string[]
  execute(args: A, exec: ToolExecution<A>): Promise<ToolResult> | ToolResult
}

/** The model-facing description of a tool. */
export interface ToolSchema {
  name: string
  description: string
  parameters: JsonSchema
}
