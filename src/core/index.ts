// The core's door: what the CLI and the extension use of the run engine, the journal and the targets. They import
// from here only (the layering test forbids deeper imports), so what is inside may move without them knowing.

export type { ComparedTrace } from './compareRuns';
export type { RunSummary } from './engine';
export { JournalLockedError, journalPath } from './journal';
export { heldBack, holdProgressText, holdText, progressText, summaryText } from './progressText';
export { DEFAULT_SERVICE_PATIENCE_MS } from './engine';
export type { HoldEvent } from './serviceHold';
export { RERUN_SUBSETS, parseIdsFile, previousRun, selectTraces } from './rerun';
export type { RerunSubset } from './rerun';
export { RunConfigError, configSecrets, configToArgs, parseRunConfig, resolveConfigPaths, runCommandLine } from './runConfig';
export type { ConfigScope, RunConfig } from './runConfig';
export type { RunMode } from './runPlan';
export type { RunOutcome, RunProgress } from './runState';
export { describeStats, runStats } from './runStats';
export { EvaluationSession, MAX_NOTE_LENGTH, sessionId } from './session';
export type { RefusedRun, SessionRunOptions } from './session';
export { DEFAULT_SKIPPED_ANSWER, skippedNote } from './skipped';
export { defaultStateDir, listJournals, migrateJournals } from './stateDir';
export type { JournalEntry } from './stateDir';
export { StorageError } from './storage';
export type { JournalFs } from './storage';
export type { OnTargetError } from './targetCalls';
export { OPENAI_API_ORIGIN } from './targets/openaiTarget';
export { TargetError } from './targets/target';
export type { Target, TargetCallOptions } from './targets/target';
export { plainHttpWarning } from './targets/targetSecrets';
export { createTarget, targetIdentity } from './targets/targetSpec';
export type { TargetIdentity, TargetOptions, TargetSecrets, TargetSpec } from './targets/targetSpec';
export { LOCAL_STATES, STATE_LABELS } from './traceStore';
export type { LocalTraceState, RunInfo, StateCounts, TraceInfo, TraceStore } from './traceStore';
export { TOOL_VERSION } from './version';
export { formatShard, inShard, parseShard, traceHash } from './shards';
export type { Shard } from './shards';
export type { ReportData, ReportRow, ReportRun } from './report/reportTypes';
export { renderReport } from './report/renderReport';
export { runCharts } from './report/reportData';
export { writeOwnerOnly } from './exportResults';
