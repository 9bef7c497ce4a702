import type { HookAdapter } from '../adapter.ts'
import { claudeCode } from './claude-code.ts'
import { codex } from './codex.ts'
import { gemini } from './gemini.ts'

/** Every agent the host speaks to, by its `--agent` name. Add one import + one entry per agent. */
export const ADAPTERS: readonly HookAdapter[] = [
  claudeCode,
  codex,
  gemini,
]

/** The adapter for `agent`, or undefined. */
export function adapterFor(agent: string): HookAdapter | undefined {
  return ADAPTERS.find(a => a.agent === agent)
}
