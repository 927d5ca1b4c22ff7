// The report page's data, as the page reads it: the core's types. Its rows are indexed by the protocol's Row.
export type { ReportData, ReportRow, ReportRun } from '../core';
