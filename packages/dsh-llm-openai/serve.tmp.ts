import { writeFileSync } from 'node:fs'
import { startProtocolServer, textStream, toolCallStream } from 'dsh-llm-openai/test-server'
const replies = [
  { stream: textStream('Thinking very hard about it', 4).slice(0, 3), hang: true },
  { stream: toolCallStream([{ id: 'b', name: 'bash', arguments: { command: 'sleep 1; echo hi' } }], { text: 'Let me run it.' }), pauseMs: 20 },
  { stream: textStream('All done here.', 2), pauseMs: 30 },
]
const server = await startProtocolServer((_r, i) => replies[i % 3]!)
writeFileSync('/tmp/ptytest/cordis.yml', [
  '- { id: sessions, name: dsh-session }', '- { id: sessions-jsonl, name: dsh-session/jsonl }', '- { id: tools, name: dsh-tools }',
  '- { id: workspace-tools, name: dsh-tools-workspace }', '- { id: llm, name: dsh-llm }', '- id: model', '  name: dsh-llm-openai',
  `  config: { baseUrl: '${server.baseUrl}', model: test-model }`, '- { id: agents, name: dsh-agent }', ''].join('\n'))
console.log('ready', server.baseUrl)
setTimeout(() => server.close(), 120_000)
