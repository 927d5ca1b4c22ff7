// The report page's data, as the page reads it: the core's types, and indexes into its rows.
export type { ReportData, ReportRow, ReportRun } from '../core';

/** Indexes into a ReportRow (a const enum: the bundle reads r[3], the source r[ReportCol.Answer]). */
export const enum ReportCol {
  TraceId = 0,
  State = 1,
  Prompt = 2,
  Answer = 3,
  LatencyMs = 4,
  Error = 5,
  Verdict = 6,
  Note = 7,
  RunId = 8,
}
