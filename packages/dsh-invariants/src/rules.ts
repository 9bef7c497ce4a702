import type { InvariantRule } from './types.ts'

/** One line per rule: what the contract requires. Rendered by the README and `dsh lint-log --help`. */
export const RULES: Readonly<Record<InvariantRule, string>> = Object.freeze({
  'seq': 'every event has a non-negative integer seq, greater than the previous event\'s',
  'shape': 'an event is an object with a string type; turn/step events carry integer turn/step numbers, tool events a string callId',
  'turn-overlap': 'turn/start only when no turn is open (turns never overlap)',
  'turn-end': 'turn/end closes the open turn with the same turn number',
  'turn-end-open-step': 'no step is open at turn/end',
  'step-outside-turn': 'step/start only inside the open turn, naming its turn number',
  'step-overlap': 'step/start only when no step is open (steps never overlap)',
  'step-end': 'step/end closes the open step with the same turn and step numbers',
  'outside-step': 'assistant/chunk, assistant/message, tool/call and tool/result only inside the open step',
  'result-without-call': 'a tool/result follows a tool/call with the same callId in the same step, one result per call',
  'agent-status': 'an agent moves only idle ↔ running and (idle | running) → disposed; it starts idle',
})
