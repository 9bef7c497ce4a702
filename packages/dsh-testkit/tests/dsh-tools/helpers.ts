import type { ToolDefinition } from 'dsh-tools'

export const echoTool: ToolDefinition<{ text: string }> = {
  name: 'echo',
  description: 'Echo text.',
  effects: 'read',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: args => ({ content: args.text }),
}
