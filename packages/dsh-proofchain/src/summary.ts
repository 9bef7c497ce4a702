import type { ProofEntry } from './types.ts'

/** Opening line of a session's summary, the form the model sees. */
export const SUMMARY_HEADER = 'Proof chain — latest harness-verified result per check in this session (failures first):'
/** Opening line when the summary covers every session of a vault (`dsh proof show` without `--session`). */
export const SUMMARY_HEADER_ALL = 'Proof chain — latest harness-verified result per check, all sessions (failures first):'
/** Closing line, present whenever something is failing. */
export const SUMMARY_FOOTER = 'Each ✗ failed on its latest run: fix it and let the harness re-check it before you call it done.'

export interface SummaryOptions {
  /** Approximate token budget for the whole text (≈ 4 characters a token); 0 = unbounded. */
  budgetTokens: number
  /** Cap on one line, in characters (default 200). */
  lineMaxChars?: number
  /** Header wording: one session (default) or a whole vault. */
  scope?: 'session' | 'all'
}

export interface ProofSummary {
  /** The summary text; '' when nothing was recorded. */
  text: string
  /** Entries listed, in order (failures newest first, then passes newest first). */
  shown: ProofEntry[]
  /** Subjects whose latest outcome is `fail` / `ok`. */
  failing: number
  verified: number
  /** Subjects left out by the budget. */
  hiddenFailing: number
  hiddenVerified: number
  /** {@link estimateTokens} of `text`. */
  tokens: number
}

/** Rough token count used for the budget: a token is taken as four characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4)
}

/** Latest entry per subject in one scope, ordered by recency through Map insertion order. */
class SubjectScope {
  readonly failing = new Map<string, ProofEntry>()
  readonly passing = new Map<string, ProofEntry>()
  version = 0

  add(entry: ProofEntry) {
    // Delete-then-set moves the subject to the end: the Maps stay ordered oldest → newest.
    this.failing.delete(entry.subject)
    this.passing.delete(entry.subject)
    ;(entry.outcome === 'fail' ? this.failing : this.passing).set(entry.subject, entry)
    this.version++
  }
}

/**
 * The summary's index: for each subject, its newest entry, per session and
 * for the whole vault. `add` is O(1), so a summary costs time proportional
 * to the number of subjects, never to the length of the chain. Entries must
 * be added in chain order (a later entry supersedes an earlier one).
 */
export class SummaryIndex {
  private readonly _all = new SubjectScope()
  private readonly _sessions = new Map<string, SubjectScope>()

  add(entry: ProofEntry): void {
    this._all.add(entry)
    let scope = this._sessions.get(entry.sessionId)
    if (!scope) this._sessions.set(entry.sessionId, scope = new SubjectScope())
    scope.add(entry)
  }

  clear(): void {
    this._all.failing.clear()
    this._all.passing.clear()
    this._all.version++
    this._sessions.clear()
  }

  /** Bumped on every `add` that touches the scope; a cheap "did anything change" check. */
  version(sessionId?: string): number {
    return (sessionId === undefined ? this._all : this._sessions.get(sessionId))?.version ?? 0
  }

  sessionIds(): string[] {
    return [...this._sessions.keys()]
  }

  /** Newest entry per subject: failures newest first, then passes newest first. */
  latest(sessionId?: string): { failing: ProofEntry[]; passing: ProofEntry[] } {
    const scope = sessionId === undefined ? this._all : this._sessions.get(sessionId)
    if (!scope) return { failing: [], passing: [] }
    return { failing: [...scope.failing.values()].reverse(), passing: [...scope.passing.values()].reverse() }
  }

  /**
   * Every session's newest entry per subject with `seq` below `seq`, oldest
   * first: what a prune must carry in its anchor so no subject's latest
   * outcome is forgotten.
   */
  carriedBefore(seq: number): ProofEntry[] {
    const out: ProofEntry[] = []
    for (const scope of this._sessions.values()) {
      for (const entry of scope.failing.values()) if (entry.seq < seq) out.push(entry)
      for (const entry of scope.passing.values()) if (entry.seq < seq) out.push(entry)
    }
    return out.sort((a, b) => a.seq - b.seq)
  }

  /** The summary of one session (or, without `sessionId`, of the whole vault). */
  summary(sessionId: string | undefined, options: SummaryOptions): ProofSummary {
    const { failing, passing } = this.latest(sessionId)
    return renderSummary(failing, passing, { scope: sessionId === undefined ? 'all' : 'session', ...options })
  }
}

/**
 * Render a summary from deduplicated entries (each list newest first):
 * header, `✗ subject — detail` lines, `✓ subject` lines, `+N more …` for
 * what the budget left out, and the footer when anything fails.
 */
export function renderSummary(failing: readonly ProofEntry[], passing: readonly ProofEntry[], options: SummaryOptions): ProofSummary {
  const total = failing.length + passing.length
  if (!total) return { text: '', shown: [], failing: 0, verified: 0, hiddenFailing: 0, hiddenVerified: 0, tokens: 0 }
  const max = options.lineMaxChars ?? 200
  const header = options.scope === 'all' ? SUMMARY_HEADER_ALL : SUMMARY_HEADER
  const footer = failing.length ? SUMMARY_FOOTER : undefined
  const candidates = [...failing, ...passing]
  const lines = candidates.map(entry => formatLine(entry, max))
  const budgetChars = options.budgetTokens > 0 ? options.budgetTokens * 4 : Infinity
  const assemble = (count: number): string[] => {
    const hiddenFailing = Math.max(0, failing.length - count)
    const hiddenVerified = Math.min(passing.length, total - count)
    const out = [header, ...lines.slice(0, count)]
    const more = [hiddenFailing ? `+${hiddenFailing} more failing` : '', hiddenVerified ? `+${hiddenVerified} more verified` : ''].filter(Boolean)
    if (more.length) out.push(more.join(', '))
    if (footer) out.push(footer)
    return out
  }
  let shown = total
  if (assemble(total).join('\n').length > budgetChars) {
    // Reserve room for the longest possible "+N more" line, then fill in order.
    const reserve = `\n+${failing.length} more failing, +${passing.length} more verified`.length + (footer ? footer.length + 1 : 0)
    let used = header.length + reserve
    shown = 0
    while (shown < total && used + 1 + lines[shown]!.length <= budgetChars) used += 1 + lines[shown++]!.length
  }
  const text = assemble(shown).join('\n')
  return {
    text,
    shown: candidates.slice(0, shown),
    failing: failing.length,
    verified: passing.length,
    hiddenFailing: Math.max(0, failing.length - shown),
    hiddenVerified: Math.min(passing.length, total - shown),
    tokens: estimateTokens(text),
  }
}

function formatLine(entry: ProofEntry, max: number): string {
  if (entry.outcome === 'ok') return clip(`✓ ${entry.subject}`, max)
  const reason = firstLine(entry.detail)
  return clip(reason ? `✗ ${entry.subject} — ${reason}` : `✗ ${entry.subject}`, max)
}

function firstLine(text: string): string {
  const nl = text.indexOf('\n')
  return (nl === -1 ? text : text.slice(0, nl)).trim()
}

/** Keep the head of a one-line text, marking the cut with "…". */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`
}
