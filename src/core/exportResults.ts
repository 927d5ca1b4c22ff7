import type { TraceInfo, TraceStore } from './traceStore';

export type ExportFormat = 'jsonl' | 'csv';

const COLUMNS = ['traceId', 'prompt', 'answer', 'state', 'errorAnswer', 'latencyMs', 'answeredAt', 'submittedAt', 'error'] as const;

function row(t: TraceInfo): Record<(typeof COLUMNS)[number], string | number | boolean | null> {
  return {
    traceId: t.traceId,
    prompt: t.prompt ?? null,
    answer: t.answer ?? null,
    state: t.state,
    errorAnswer: t.errorAnswer,
    latencyMs: t.latencyMs ?? null,
    answeredAt: t.answeredAt ? new Date(t.answeredAt).toISOString() : null,
    submittedAt: t.submittedAt ? new Date(t.submittedAt).toISOString() : null,
    error: t.error ?? null,
  };
}

function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Results as JSONL or CSV (RFC 4180): trace data and timings only; the journal holds no secrets to leak. */
export function* exportLines(store: TraceStore, format: ExportFormat): Generator<string> {
  if (format === 'csv') yield `${COLUMNS.join(',')}\r\n`;
  for (const trace of store.traces.values()) {
    const r = row(trace);
    yield format === 'jsonl' ? `${JSON.stringify(r)}\n` : `${COLUMNS.map((c) => csvCell(r[c])).join(',')}\r\n`;
  }
}
