export * from './server.ts'
export * from './openai-responses.ts'
export * from './gemini.ts'
export * from './anthropic.ts'
