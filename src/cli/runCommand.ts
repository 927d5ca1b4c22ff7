import { runEvaluation } from '../core/engine';
import type { OnTargetError, RunOutcome, RunSummary } from '../core/engine';
import { JournalLockedError, journalPath, nullJournal, openJournal } from '../core/journal';
import type { Journal } from '../core/journal';
import type { Target } from '../core/targets/target';
import { TraceStore } from '../core/traceStore';
import type { RequestEncoding } from '../api/kinds';
import { choiceOption, intOption, parseCommandArgs } from './args';
import { SERVICE_HELP, SERVICE_OPTIONS, TOKEN_HELP, clientFor, isNotFound, otherKindHint, serviceArgs, stateDirOf, tokenFromEnv } from './common';
import type { ServiceArgs } from './common';
import { EXIT, UsageError } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { summaryText } from '../core/progressText';
import { progressReporter } from './progressLine';
import { TARGET_HELP, TARGET_OPTIONS, targetFromArgs } from './targetOptions';
import { safeJson, safeText } from './terminalText';

export const RUN_HELP = `Usage: eval-runner run --base-url URL --evaluation ID --kind benchmark|robustness --target KIND [options]

Lists the evaluation's prompts (robustness: waits for generation), sends each to the target, journals
every answer on disk, then submits it. Run it again to resume: journaled answers are submitted without
calling the target again, and a finished evaluation submits nothing.

${SERVICE_HELP}
  --concurrency N             traces handled at once (default 8)
  --state-dir DIR             where journals live (default $XDG_STATE_HOME/eval-runner or ~/.local/state/eval-runner)
  --wait-for-generation S     robustness: wait up to S seconds for the adversarial prompts (default 0: ask once)
  --on-target-error fail|submit  after 3 tries, fail the trace (default) or submit a fixed description of
                              the error ("target error: HTTP 500"; a model's refusal is an answer anyway)
  --encoding urlencoded|multipart  form encoding of submissions (default urlencoded)
  --no-journal                keep nothing on disk (for measuring the journal's cost; no resume)
  --json                      JSON lines on stdout: progress events and one final summary
${TARGET_HELP}

${TOKEN_HELP}
Exit codes: 0 all submitted · 1 failed traces · 2 usage/configuration · 3 token rejected ·
4 service unreachable or prompts not ready · 130 interrupted (Ctrl-C once drains, twice aborts).
`;

export interface RunRequest {
  args: ServiceArgs;
  token: string;
  target: Target;
  targetTimeoutMs: number;
  concurrency: number;
  stateDir: string;
  waitForGenerationMs: number;
  onTargetError: OnTargetError;
  encoding: RequestEncoding;
  journal: boolean;
  json: boolean;
  label: string;
}

export interface RunIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  drainSignal?: AbortSignal;
  signal?: AbortSignal;
}

const OUTCOME_EXIT: Record<RunOutcome, ExitCode> = {
  completed: EXIT.ok,
  failedTraces: EXIT.failedTraces,
  quota: EXIT.failedTraces,
  error: EXIT.failedTraces,
  cancelled: EXIT.interrupted,
  auth: EXIT.auth,
  unreachable: EXIT.unreachable,
  notReady: EXIT.unreachable,
};

/** One run from the command line: journal, engine, progress and summary. Shared by `run` and `demo`. */
export async function executeRun(req: RunRequest, io: RunIo): Promise<{ summary: RunSummary; code: ExitCode }> {
  const client = clientFor(req.args, req.token, req.encoding, req.concurrency);
  let journal: Journal = nullJournal();
  let store = new TraceStore();
  try {
    if (req.journal) {
      const path = journalPath(req.stateDir, { origin: client.origin, kind: req.args.kind, evaluationId: req.args.evaluationId });
      let opened;
      try {
        opened = await openJournal(path);
      } catch (error) {
        if (error instanceof JournalLockedError) throw new UsageError(error.message);
        throw error;
      }
      journal = opened.journal;
      store = TraceStore.fromRecords(opened.replay.records);
      if (opened.replay.tornTail) {
        io.stderr.write(`Note: the journal's last line was cut short by an earlier crash; it was dropped (that trace is simply redone).\n`);
      }
      if (opened.replay.corruptLines) io.stderr.write(`${invalidLinesNote(opened.replay.corruptLines, path)}\n`);
      await journal.append({
        t: 'run',
        at: Date.now(),
        origin: client.origin,
        kind: req.args.kind,
        evaluationId: req.args.evaluationId,
        target: req.target.description,
      });
    }
    const reporter = req.json ? undefined : progressReporter(io.stderr, req.label);
    const summary = await runEvaluation({
      client,
      kind: req.args.kind,
      evaluationId: req.args.evaluationId,
      target: req.target,
      journal,
      store,
      concurrency: req.concurrency,
      waitForGenerationMs: req.waitForGenerationMs,
      onTargetError: req.onTargetError,
      targetTimeoutMs: req.targetTimeoutMs,
      ...(io.signal ? { signal: io.signal } : {}),
      ...(io.drainSignal ? { drainSignal: io.drainSignal } : {}),
      progressIntervalMs: req.json ? 1000 : 200,
      onProgress: (p) => {
        if (req.json) io.stdout.write(`${safeJson(JSON.stringify({ type: 'progress', ...p }))}\n`);
        else reporter!.update(p);
      },
      onLog: (level, message) => {
        if (level !== 'info' || !req.json) {
          reporter?.end();
          io.stderr.write(`${level === 'info' ? '' : `${level}: `}${safeText(message)}\n`);
        }
      },
    });
    reporter?.end();
    if (summary.outcome === 'error' && isNotFound(summary.error)) {
      summary.message = `${summary.message ?? ''}${await otherKindHint(client, req.args)}`;
    }
    let code = OUTCOME_EXIT[summary.outcome];
    if (summary.outcome === 'error' && isNotFound(summary.error)) code = EXIT.usage;
    if (summary.outcome === 'auth') summary.message = `${summary.message} Set EVAL_RUNNER_TOKEN to a valid personal access token.`;
    if (req.json) {
      const { error: _error, ...rest } = summary;
      io.stdout.write(`${safeJson(JSON.stringify({ type: 'summary', exitCode: code, ...rest }))}\n`);
    } else io.stdout.write(`${safeText(summaryText(req.label, summary))}\n`);
    return { summary, code };
  } finally {
    await journal.close();
    await req.target.close?.();
    await client.close();
  }
}

export function invalidLinesNote(count: number, path: string): string {
  return `Note: ${count} line(s) of the journal ${path} are unreadable or not a record Eval Runner wrote; they were skipped and nothing is submitted from them.`;
}

/** Ctrl-C once: finish in-flight traces and save; twice: abort at once. */
export function interruptSignals(stderr: NodeJS.WritableStream): { drain: AbortController; hard: AbortController; dispose(): void } {
  const drain = new AbortController();
  const hard = new AbortController();
  const onSignal = () => {
    if (!drain.signal.aborted) {
      drain.abort();
      stderr.write('\nFinishing the traces in flight and saving; press Ctrl-C again to stop at once.\n');
    } else hard.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    drain,
    hard,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export async function runCommand(argv: string[], stdout: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, {
    ...SERVICE_OPTIONS,
    ...TARGET_OPTIONS,
    concurrency: { type: 'string' },
    'state-dir': { type: 'string' },
    'wait-for-generation': { type: 'string' },
    'on-target-error': { type: 'string' },
    encoding: { type: 'string' },
    'no-journal': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (v.help) {
    stdout.write(RUN_HELP);
    return EXIT.ok;
  }
  const args = serviceArgs(v);
  const concurrency = intOption(v.concurrency, 'concurrency', 8, 1, 1024);
  const request: Omit<RunRequest, 'target' | 'targetTimeoutMs'> = {
    args,
    token: tokenFromEnv(),
    concurrency,
    stateDir: stateDirOf(v['state-dir']),
    waitForGenerationMs: intOption(v['wait-for-generation'], 'wait-for-generation', 0, 0, 86_400) * 1000,
    onTargetError: choiceOption(v['on-target-error'], 'on-target-error', ['fail', 'submit'] as const, 'fail'),
    encoding: choiceOption(v.encoding, 'encoding', ['urlencoded', 'multipart'] as const, 'urlencoded'),
    journal: !v['no-journal'],
    json: v.json === true,
    label: `${args.kind} ${args.evaluationId}`,
  };
  const { target, timeoutMs, warnings } = targetFromArgs(v, concurrency);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  const signals = interruptSignals(process.stderr);
  try {
    const { code } = await executeRun(
      { ...request, target, targetTimeoutMs: timeoutMs },
      { stdout, stderr: process.stderr, drainSignal: signals.drain.signal, signal: signals.hard.signal },
    );
    return code;
  } finally {
    signals.dispose();
  }
}
