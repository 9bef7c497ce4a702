/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { KeptChange, KeptRecord } from 'dsh-snapshot'
import type { CallView, CheckpointView, ProofState, SessionSummary, SessionView, TimelineItem } from './timeline.ts'
import type { FileDiff } from './diff.ts'

/** What the pages need besides the vault: the token for links and forms, and how to diff a change. */
export interface PageContext {
  token: string
  workspace: string
  diff(change: KeptChange): FileDiff
  /** A message after an action (an undo done or refused). */
  flash?: { ok: boolean; text: string }
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1b1f24;color:#fff;padding:10px 20px;display:flex;gap:16px;align-items:baseline}
header a{color:#9cf}main{padding:16px 20px;max-width:1100px}
table.sessions{border-collapse:collapse;width:100%;background:#fff}
table.sessions td,table.sessions th{border-bottom:1px solid #ddd;padding:6px 8px;text-align:left}
.item{background:#fff;border:1px solid #d8dbe0;border-radius:6px;margin:10px 0;padding:10px 12px}
.item.note{background:#fbfbf2}.item h3{margin:0 0 4px;font-size:15px}
.meta{color:#57606a;font-size:12px}
.v{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600;color:#fff}
.v-kept{background:#1a7f37}.v-warned{background:#9a6700}.v-rolled-back{background:#cf222e}.v-provisional{background:#8250df}
.v-not-verified{background:#6e7781}.v-group-rollback{background:#a40e26}.v-refused{background:#6e7781}.v-ran{background:#57606a}.v-running{background:#0969da}.v-pending{background:#bf8700}
.v-undone{background:#bc4c00}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,monospace}
pre.msg{background:#f0f2f5;padding:6px 8px;border-radius:4px}
table.diff{border-collapse:collapse;width:100%;font:12px/1.4 ui-monospace,monospace;margin:4px 0}
table.diff td{padding:0 6px;white-space:pre-wrap;word-break:break-all;vertical-align:top}
table.diff td.n{color:#8c959f;text-align:right;width:1%;user-select:none}
tr.add td.t{background:#dafbe1}tr.del td.t{background:#ffebe9}tr.hunk td{background:#ddf4ff;color:#57606a}
.checks{margin:4px 0;padding-left:18px}.flash{padding:8px 12px;border-radius:6px;margin:8px 0}
.flash.ok{background:#dafbe1}.flash.bad{background:#ffebe9}
form.undo{display:inline;margin-left:8px}button{cursor:pointer}
details>summary{cursor:pointer;color:#57606a}
`

function Layout(props: { title: string; ctx: PageContext; live?: string; children?: Child }) {
  const q = `?token=${encodeURIComponent(props.ctx.token)}`
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>{props.title}</title>
        <style>{CSS}</style>
      </head>
      <body>
        <header><strong>dsh review</strong><span>{props.ctx.workspace}</span><a href={`/${q}`}>sessions</a></header>
        <main>
          {props.ctx.flash ? <div class={`flash ${props.ctx.flash.ok ? 'ok' : 'bad'}`} role="status">{props.ctx.flash.text}</div> : null}
          {props.children}
        </main>
        {props.live ? <script src={`/live.js${q}&session=${encodeURIComponent(props.live)}`} defer></script> : null}
      </body>
    </html>
  )
}

/** How a verdict reads on the page (a pending one says what the agent was told: kept for now, its tests still running). */
const LABELS: Record<string, string> = { pending: 'pending: kept for now, tests running' }

function Verdict(props: { verdict: string }) {
  return <span class={`v v-${props.verdict.replace(/ /g, '-')}`}>{LABELS[props.verdict] ?? props.verdict}</span>
}

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19)

/** The session list. */
export function SessionsPage(props: { ctx: PageContext; sessions: SessionSummary[] }) {
  const q = `?token=${encodeURIComponent(props.ctx.token)}`
  return (
    <Layout title="dsh review" ctx={props.ctx} live="*">
      <h2>Sessions</h2>
      {props.sessions.length ? (
        <table class="sessions">
          <thead><tr><th>session</th><th>started</th><th>last activity</th><th>calls</th><th>verdicts</th></tr></thead>
          <tbody>
            {props.sessions.map(s => (
              <tr>
                <td><a href={`/session/${encodeURIComponent(s.id)}${q}`}>{s.id}</a></td>
                <td>{time(s.started)}</td>
                <td>{time(s.updated)}</td>
                <td>{s.calls}</td>
                <td>{Object.entries(s.counts).map(([v, n]) => <span><Verdict verdict={v} /> {n} </span>)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : <p>No sessions recorded in this workspace's vault yet.</p>}
    </Layout>
  )
}

/** One session's timeline. */
export function SessionPage(props: { ctx: PageContext; view: SessionView }) {
  const { view, ctx } = props
  return (
    <Layout title={`dsh review · ${view.summary.id}`} ctx={ctx} live={view.summary.id}>
      <h2>Session {view.summary.id}</h2>
      <p class="meta">started {time(view.summary.started)} · {view.summary.calls} calls · <Proof proof={view.proof} />{view.summary.torn ? ' · the log\'s last line was cut short (a crash?)' : ''}</p>
      <div id="timeline">
        {view.items.map(item => <Item item={item} ctx={ctx} session={view.summary.id} />)}
      </div>
      {view.checkpoint ? <Checkpoint cp={view.checkpoint} /> : null}
    </Layout>
  )
}

function Proof(props: { proof: ProofState }) {
  const p = props.proof
  if (p.state === 'none') return <span>no proof chain</span>
  if (p.state === 'broken') return <span>proof chain <strong>does not verify</strong>: {p.problem}</span>
  return <span>proof chain verified ({p.entries} entries{p.sealed ? ', sealed' : ''})</span>
}

function Item(props: { item: TimelineItem; ctx: PageContext; session: string }) {
  const { item } = props
  switch (item.kind) {
    case 'call': return <Call call={item} ctx={props.ctx} session={props.session} />
    case 'user': return <div class="item note"><span class="meta">{time(item.time)} · user</span><pre>{item.text}</pre></div>
    case 'context': return <div class="item note"><span class="meta">{time(item.time)} · shown to the model ({item.source})</span><pre class="msg">{item.text}</pre></div>
    case 'turn-end': return <div class="meta">— turn {item.turn} ended ({item.reason}) —</div>
    case 'group-rollback': return <div class="item"><h3><Verdict verdict="group rollback" /> calls {item.callIds.join(', ')}</h3><pre class="msg">{item.text}</pre></div>
    case 'undo': return <UndoItem item={item} ctx={props.ctx} session={props.session} />
  }
}

function Call(props: { call: CallView; ctx: PageContext; session: string }) {
  const c = props.call
  const command = typeof c.arguments.command === 'string' ? c.arguments.command : undefined
  return (
    <div class="item call" id={`call-${c.callId}`} data-call={c.callId} data-verdict={c.verdict}>
      <h3>
        <Verdict verdict={c.verdict} /> {c.tool} {c.paths.join(', ')}
        {c.undoneBy ? <> <span class="v v-undone">undone</span></> : null}
        {c.undo.ok ? <UndoButton ctx={props.ctx} session={props.session} id={c.record!.id} label={`Undo ${c.callId}`} /> : null}
      </h3>
      <div class="meta">{time(c.time)} · call {c.callId}{c.turn !== undefined ? ` · turn ${c.turn}` : ''}{c.step !== undefined ? ` step ${c.step}` : ''}{c.undoneBy ? ` · taken back by ${c.undoneBy}` : ''}{!c.undo.ok && c.record && !c.undoneBy ? ` · cannot be undone: ${c.undo.why}` : ''}</div>
      {command ? <pre>$ {command}</pre> : null}
      {c.checks.length ? (
        <ul class="checks">
          {c.checks.map(k => <li>{k.check}: {k.outcome} in {k.durationMs} ms{k.newProblems.length ? <pre>{k.newProblems.join('\n')}</pre> : null}</li>)}
        </ul>
      ) : null}
      <Changes record={c.record} ctx={props.ctx} />
      {c.result ? <details open={c.result.isError || !['kept', 'ran'].includes(c.verdict)}><summary>what the model saw</summary><pre class="msg">{c.result.content}</pre></details> : null}
    </div>
  )
}

function UndoItem(props: { item: Extract<TimelineItem, { kind: 'undo' }>; ctx: PageContext; session: string }) {
  const { record } = props.item
  return (
    <div class="item undo" data-undo={record.id}>
      <h3><span class="v v-undone">undo</span> {record.reason}{props.item.undo.ok ? <UndoButton ctx={props.ctx} session={props.session} id={record.id} label="Undo this undo" /> : null}</h3>
      <div class="meta">{time(record.time)} · {record.id}{props.item.undoneBy ? ` · taken back by ${props.item.undoneBy}` : ''}</div>
      <Changes record={record} ctx={props.ctx} />
    </div>
  )
}

function UndoButton(props: { ctx: PageContext; session: string; id: string; label: string }) {
  return (
    <form class="undo" method="post" action={`/undo?token=${encodeURIComponent(props.ctx.token)}`}>
      <input type="hidden" name="id" value={props.id} />
      <input type="hidden" name="session" value={props.session} />
      <button type="submit">{props.label}</button>
    </form>
  )
}

function Changes(props: { record?: KeptRecord; ctx: PageContext }) {
  const r = props.record
  if (!r) return null
  if (r.pruned) return <p class="meta">changes pruned ({r.pruned.why}): {r.changes.map(c => c.path).join(', ')}</p>
  if (!r.changes.length) return <p class="meta">{r.unmeasured ? 'what it changed was never measured' : 'changed nothing'}</p>
  return <div class="changes">{r.changes.map(change => <Diff diff={props.ctx.diff(change)} />)}</div>
}

function Diff(props: { diff: FileDiff }) {
  const d = props.diff
  return (
    <div class="file">
      <div class="meta"><strong>{d.path}</strong> · {d.summary}</div>
      {d.hunks.length ? (
        <table class="diff">
          {d.hunks.map(h => (
            <>
              <tr class="hunk"><td class="n"></td><td class="n"></td><td>{h.header}</td></tr>
              {h.lines.map(l => <tr class={l.kind}><td class="n">{l.old ?? ''}</td><td class="n">{l.new ?? ''}</td><td class="t">{l.sign}{l.text}</td></tr>)}
            </>
          ))}
        </table>
      ) : null}
    </div>
  )
}

function Checkpoint(props: { cp: CheckpointView }) {
  const cp = props.cp
  return (
    <div class="item note checkpoint">
      <h3>Checkpoint · {time(cp.time)}</h3>
      <pre>{cp.summary}</pre>
      {cp.verified.length ? <><strong>verified</strong><ul>{cp.verified.map(v => <li>{v}</li>)}</ul></> : null}
      {cp.failed.length ? <><strong>failed</strong><ul>{cp.failed.map(v => <li>{v}</li>)}</ul></> : null}
      {cp.marks.length ? <><strong>marks given by dsh-claims</strong><ul>{cp.marks.map(v => <li>{v}</li>)}</ul></> : <p class="meta">no claim was marked</p>}
    </div>
  )
}
