import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { once } from 'node:events';
import type { TraceInfo, TraceStore } from '../store/traceStore';

export type ExportFormat = 'jsonl' | 'csv';

const COLUMNS = [
  'traceId',
  'prompt',
  'answer',
  'state',
  'errorAnswer',
  'runId',
  'target',
  'latencyMs',
  'promptTokens',
  'completionTokens',
  'rating',
  'note',
  'answeredAt',
  'submittedAt',
  'error',
  // Last, so that the columns before keep their places for scripts that read them by position.
  'notAnswered',
  'ttftMs',
  'alreadyAtService',
] as const;

function row(t: TraceInfo, store: TraceStore, judged: TraceStore): Record<(typeof COLUMNS)[number], string | number | boolean | null> {
  const run = store.runById(t.answerRun);
  // An older run's answers have the verdicts given to them, kept by run (see RunVerdicts); the latest's are its own.
  const verdict = judged === store ? t : judged.verdictOf(t.answerRun, t.traceId);
  return {
    traceId: t.traceId,
    prompt: t.prompt ?? null,
    answer: t.answer ?? null,
    state: t.state,
    errorAnswer: t.errorAnswer,
    notAnswered: t.notAnswered,
    ttftMs: t.ttftMs ?? null,
    alreadyAtService: t.alreadyAtService,
    runId: t.answerRun ?? null,
    // The run's target answered, unless a reviewer wrote the answer.
    target: t.answeredBy === 'user' ? 'reviewer' : run?.target ?? null,
    latencyMs: t.latencyMs ?? null,
    promptTokens: t.promptTokens ?? null,
    completionTokens: t.completionTokens ?? null,
    rating: verdict?.rating ?? null,
    note: verdict?.note ?? null,
    answeredAt: t.answeredAt ? new Date(t.answeredAt).toISOString() : null,
    submittedAt: t.submittedAt ? new Date(t.submittedAt).toISOString() : null,
    error: t.error ?? null,
  };
}

/**
 * One RFC 4180 cell. Text a spreadsheet would read as a formula (=, +, -, @, tab, carriage return first) gets
 * a leading apostrophe (OWASP's CSV-injection rule): prompts, answers and trace ids come from the service
 * and the model, and robustness prompts are adversarial by design.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export interface ExportOptions {
  /** A UTF-8 byte order mark first, so Excel reads the CSV as UTF-8. */
  bom?: boolean;
  /** The run whose answers to write (its id or the start of one, as `status` shows it); the latest by default. */
  run?: string;
}

/**
 * Results as JSONL or CSV (RFC 4180): trace data and timings only; the journal holds no secrets to leak. `judged`:
 * the session's store, whose verdicts `store` (an older run's, see storeAsOfRun) shows.
 */
export function* exportLines(store: TraceStore, format: ExportFormat, options: ExportOptions = {}, judged = store): Generator<string> {
  if (format === 'csv') yield `${options.bom ? '\uFEFF' : ''}${COLUMNS.join(',')}\r\n`;
  for (const trace of store.traces.values()) {
    const r = row(trace, store, judged);
    yield format === 'jsonl' ? `${JSON.stringify(r)}\n` : `${COLUMNS.map((c) => csvCell(r[c])).join(',')}\r\n`;
  }
}

/**
 * Writes the export to a file readable by its owner only (answers can be confidential), streaming so 100k
 * traces never sit in memory as one string. An existing file is truncated and made owner-only too.
 */
export async function exportToFile(store: TraceStore, format: ExportFormat, path: string, options: ExportOptions = {}, judged = store): Promise<number> {
  const out = await openOwnerOnly(path);
  for (const line of exportLines(store, format, options, judged)) if (!out.write(line)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  return store.traces.size;
}

/**
 * A file only its owner can read, opened for writing: a file that was there before is made owner-only too, before
 * anything is written (a new file's mode alone would leave an old world-readable one as it was).
 */
async function openOwnerOnly(path: string): Promise<WriteStream> {
  const out = createWriteStream(path, { mode: 0o600 });
  await once(out, 'open');
  await chmod(path, 0o600);
  return out;
}

/** Writes pieces of text (a report, made as it is written) to a file only its owner can read; the bytes written. */
export async function writePiecesOwnerOnly(path: string, pieces: Iterable<string>): Promise<number> {
  const out = await openOwnerOnly(path);
  let bytes = 0;
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece);
    if (!out.write(piece)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

/** Writes text (a report) to a file only its owner can read, as exports are. */
export async function writeOwnerOnly(path: string, text: string): Promise<void> {
  const out = await openOwnerOnly(path);
  out.end(text);
  await once(out, 'finish');
}
