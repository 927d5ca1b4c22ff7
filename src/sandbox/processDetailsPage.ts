import { SERVICE_TRACE_STATES, summarise, traceScore, traceState } from './store';
import type { EvaluationSummary, SandboxEvaluation } from './store';

const PAGE_SIZE = 500;
const PREVIEW = 160;

/** Every dynamic string goes through here: prompts are adversarial by design. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function preview(text: string | undefined): string {
  if (text === undefined) return '';
  return escapeHtml(text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text);
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}td.t{white-space:pre-wrap;word-break:break-word}
.s{font-weight:600}.Evaluated{color:#1a7f37}.Responded{color:#9a6700}.Sent{color:#0969da}.bar{height:8px;background:#eee}
.bar>div{height:8px;background:#1a7f37}`;

function layout(title: string, body: string, refresh: boolean): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${refresh ? '<meta http-equiv="refresh" content="2">' : ''}
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export function renderIndexPage(summaries: EvaluationSummary[]): string {
  const rows = summaries
    .map(
      (s) =>
        `<tr><td><a href="/evaluations/${s.evaluationId}">${s.evaluationId}</a></td><td>${s.kind}</td><td>${s.state}</td><td>${s.traces}</td></tr>`,
    )
    .join('');
  return layout(
    'Sandbox evaluations',
    `<h1>Evaluation sandbox</h1><table><tr><th>Evaluation</th><th>Kind</th><th>State</th><th>Traces</th></tr>${rows}</table>`,
    true,
  );
}

export function renderProcessDetailsPage(evaluation: SandboxEvaluation, evaluationDelayMs: number, now: number, page: number): string {
  const s = summarise(evaluation, evaluationDelayMs, now);
  const done = s.traces ? Math.round((100 * s.counts.Evaluated) / s.traces) : 0;
  const counts = SERVICE_TRACE_STATES.map((state) => `${state}: <b>${s.counts[state]}</b>`).join(' · ');
  const traces = [...evaluation.traces.values()].slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const rows = traces
    .map((t) => {
      const state = traceState(t, evaluationDelayMs, now);
      const score = state === 'Evaluated' && t.answer !== undefined ? String(traceScore(evaluation.kind, t.answer)) : '';
      return `<tr><td class="s ${state.replace(' ', '')}">${state}</td><td class="t">${escapeHtml(t.traceId)}</td><td class="t">${preview(
        t.content,
      )}</td><td class="t">${preview(t.answer)}</td><td>${score}</td></tr>`;
    })
    .join('');
  const pages = Math.max(1, Math.ceil(evaluation.traces.size / PAGE_SIZE));
  const nav =
    pages > 1
      ? `<p>Page ${page} of ${pages}${page > 1 ? ` · <a href="?page=${page - 1}">previous</a>` : ''}${
          page < pages ? ` · <a href="?page=${page + 1}">next</a>` : ''
        }</p>`
      : '';
  return layout(
    `Process Details: evaluation ${evaluation.evaluationId}`,
    `<p><a href="/">All evaluations</a></p><h1>Process Details: ${evaluation.kind} evaluation ${evaluation.evaluationId}</h1>
<p>Evaluation state: <b id="evaluation-state">${s.state}</b> · ${done}% evaluated</p><div class="bar"><div style="width:${done}%"></div></div>
<p>${counts}</p>${nav}<table><tr><th>State</th><th>Trace</th><th>Prompt</th><th>Answer</th><th>Score</th></tr>${rows}</table>${nav}`,
    true,
  );
}
