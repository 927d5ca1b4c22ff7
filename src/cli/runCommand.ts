import { listenForRun } from '../protocol/runListener';
import { DEFAULT_SKIPPED_ANSWER, EvaluationSession, hostedView, hostRun, REQUEST_ENCODINGS, RUN_OPTIONS, formatShard, JournalLockedError, parseIdsFile, RERUN_SUBSETS, rerunText, summaryText, TargetError, TOOL_VERSION } from '../core';
import type { BatchTarget, HostRunRequest, JournalFs, RunOptions, Shard, RefusedRun, RerunSubset, RunMode, RunOutcome, RunSummary, SessionRunOptions, Target, TargetIdentity } from '../core';
import { readFileSync } from 'node:fs';
import type { ApiClient } from '../api/client';
import { ApiError } from '../api/errors';
import type { RequestEncoding } from '../api/evaluationKinds';
import { choiceOption, intOption, parseCommandArgs } from './args';
import { CONFIG_HELP, SERVICE_HELP, TOKEN_HELP, TOKEN_NEXT_STEP, clientFor, isNotFound, otherKindHint, serviceArgs, stateDirOf, tokenFromEnv } from './common';
import type { ServiceArgs } from './common';
import { EXIT, UsageError } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { progressReporter } from './progressLine';
import { allowedTargetPlan, targetFromPlan, targetHelp } from './targetOptions';
import { RUN_FLAGS, runOptionsOf, shardOption } from './runFlags';
import { COST_HELP, costChoices, estimateWords } from './costFlags';
import type { CostChoices } from './costFlags';
import { allowTokenOrigin, ownValues } from './tokenOrigin';
import type { ConfigFlags } from './configFile';
import { safeJson, safeText } from './terminalText';
import { interruptSignals } from './interruptSignals';

const runHelp = (): string => `Usage: eval-runner run --base-url URL --evaluation ID --kind benchmark|robustness --target KIND [options]

Lists the evaluation's prompts (robustness: waits for generation), sends each to the target, journals
every answer on disk, then submits it. Run it again to resume: journaled answers are submitted without
calling the target again, and a finished evaluation submits nothing.

Every run is recorded with its target. When the journal's answers came from another target, run does
nothing and exits 2 until you choose (after a fix, --only failed reruns just the traces that failed):
  --fresh                     a new run: every trace is answered again by this target and resubmitted
  --reuse-answers             submit the journaled answers as they are; call this target only for
                              traces without one (the run is recorded as mixed)

${SERVICE_HELP}
${CONFIG_HELP}
  --only failed|bad|noted|ids:FILE
                              rerun these traces as a new run of this target, whatever they were
                              answered before and by whom: the failed ones, those marked bad or with a
                              note (in the editor), or the ids listed in FILE (one per line)
  --submit-skipped            after the run, submit each skipped trace as not answered: the service cannot
                              complete an evaluation while a trace is unanswered
  --skipped-answer TEXT       that answer's text; {reason} is the skip's reason (default "Not answered: {reason}")
  --limit N                   send at most N traces to the target in this run (a smoke test first)
  --shard K/N                 run only shard K of N (1 ≤ K ≤ N): the traces whose trace-id hash falls in it, the
                              same split on every machine; give each machine its own --state-dir, then
                              status, export and report read them as one with --state-dir given once per shard
  --no-submit                 call the target and journal the answers; submit nothing (a later run with
                              the same target submits them without calling it again)
  --concurrency N             traces handled at once (default ${RUN_OPTIONS.concurrency.default})
  --max-rpm N                 at most N target requests a minute (your quota); the pace is learned under it
                              from the endpoint's rate-limit headers and 429s either way
  --state-dir DIR             where journals live (default $XDG_STATE_HOME/eval-runner or ~/.local/state/eval-runner;
                              the editor uses the same)
  --wait-for-generation S     robustness: wait up to S seconds for the adversarial prompts (default
                              ${RUN_OPTIONS.waitForGenerationSeconds.default}, as in the editor; 0: ask once)
  --service-patience S        how long the service may be down (gateway errors, refused connections, time-outs)
                              before the run stops with exit 4 (default ${RUN_OPTIONS.servicePatienceSeconds.default}); meanwhile answers are journaled
                              and wait, submissions are held and the service is tried again with backoff
  --target-retries N          tries more for a target call that fails: by default 2 for a passing failure (a
                              crashed worker, an HTTP 503) and none for an exception your own code raised
                              (it is that prompt's answer); N sets both
  --on-target-error fail|submit  after 3 tries, fail the trace (default) or submit a fixed description of
                              the error ("target error: HTTP 500"; a model's refusal is an answer anyway)
  --max-error-rate R|off      stop (exit 1) when more than this share of the last 50 target calls failed,
                              after at least 20, saying the rate and the most common error (default 0.5)
  --encoding urlencoded|multipart  form encoding of submissions (default urlencoded)
  --no-journal                keep nothing on disk (for measuring the journal's cost; no resume)
  --json                      JSON lines on stdout: progress events and one final summary
${COST_HELP}
${targetHelp()}

${TOKEN_HELP}
Exit codes: 0 all submitted (or the --limit asked for) · 1 failed traces · 2 usage/configuration, or the
journal's answers came from another target · 3 token rejected · 4 service unavailable past --service-patience,
or prompts not ready · 5 the state folder could not be written (disk full, read-only, no permission: nothing was lost) ·
6 budget reached (--budget: answers so far are saved; a larger budget goes on) ·
130 interrupted (Ctrl-C once drains, twice aborts).
`;

/** One run from the command line: the core's RunOptions (as the editor's), adding the service, token, target and output. */
export interface CliRunRequest extends RunOptions {
  args: ServiceArgs;
  token: string;
  target: Target;
  /** --batch: the traces to answer go through the Batch API. */
  batch?: BatchTarget;
  identity: TargetIdentity;
  stateDir: string;
  encoding: RequestEncoding;
  journal: boolean;
  json: boolean;
  label: string;
  mode?: RunMode;
  limit?: number;
  /** The journal's file operations (Node's; tests inject a full disk). */
  journalFs?: JournalFs;
  /** Rerun this subset as a new run (--only). */
  only?: RerunSubset;
  /** Only this shard of the evaluation (--shard K/N). */
  shard?: Shard;
  /** After the run, submit skipped traces with this text ({reason} filled in) (--submit-skipped). */
  submitSkipped?: string;
  /** Prices, budget and --estimate (costFlags.ts). */
  cost?: CostChoices;
}

export interface RunIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  drainSignal?: AbortSignal;
  signal?: AbortSignal;
}

const OUTCOME_EXIT: Record<RunOutcome | 'targetChanged', ExitCode> = {
  completed: EXIT.ok,
  failedTraces: EXIT.failedTraces,
  quota: EXIT.failedTraces,
  error: EXIT.failedTraces,
  cancelled: EXIT.interrupted,
  auth: EXIT.auth,
  unreachable: EXIT.unreachable,
  notReady: EXIT.unreachable,
  storage: EXIT.storage,
  budget: EXIT.budget,
  targetChanged: EXIT.usage,
};

/** One run from the command line, hosted by the core (as a runner hosts the editor's). Shared by `run` and `demo`. */
export async function executeRun(req: CliRunRequest, io: RunIo): Promise<{ summary: RunSummary | RefusedRun | undefined; code: ExitCode }> {
  const client = clientFor(req.args, req.token, req.encoding, req.concurrency);
  const session = new EvaluationSession({ origin: client.origin, kind: req.args.kind, evaluationId: req.args.evaluationId }, req.stateDir, req.journal, req.journalFs);
  const reporter = req.json ? undefined : progressReporter(io.stderr, req.label);
  const request: HostRunRequest = {
    ...sessionOptions(req, io, client, reporter),
    targets: () => ({ target: req.target, batch: req.batch }),
    ...(req.only ? { subset: req.only } : {}),
    // Steerable from anywhere (eval-runner pause, a window's Run Details): it listens as a runner does. (Not
    // listening is for the bench's steer row only, which measures what listening costs.)
    ...(req.journal && process.env.EVAL_RUNNER_BENCH_NO_LISTEN !== '1' ? { listen: (steering) => listenForRun({ journalFile: session.journalFile, steering, label: req.label, key: session.key, cancel: (hard) => session.cancel(hard), view: hostedView(() => session.store) }) } : {}),
    ...costOptions(req, session, io),
  };
  try {
    return await hostRun(session, request, async (ran) => {
      const done = ran.result && ran.result.outcome !== 'targetChanged' ? ran.result : undefined;
      const note = ran.rerun && req.only ? rerunText(req.only, ran.rerun, done) : undefined;
      if (!ran.result) {
        io.stderr.write(`${safeText(note ?? '')}\n`);
        return { summary: undefined, code: EXIT.ok };
      }
      reporter?.end();
      if (ran.result.outcome === 'targetChanged') return refused(ran.result, req, io);
      if (req.cost?.estimate && ran.result.outcome === 'completed') return { summary: undefined, code: EXIT.ok };
      return told(session, client, ran.result, note, req, io);
    });
  } catch (error) {
    if (error instanceof JournalLockedError) throw new UsageError(error.message);
    throw error;
  }
}

/** The run's prices and budget; with --estimate, the words of the estimate instead of any call. */
function costOptions(req: CliRunRequest, session: EvaluationSession, io: RunIo): Pick<HostRunRequest, 'price' | 'budgetUsd' | 'estimateOnly'> {
  const cost = req.cost;
  if (!cost) return {};
  const pastRuns = session.store.runs;
  return {
    ...(cost.price ? { price: cost.price } : {}),
    ...(cost.budgetUsd !== undefined ? { budgetUsd: cost.budgetUsd } : {}),
    ...(cost.estimate ? { estimateOnly: (traces) => io.stdout.write(estimateWords(traces, cost.spec, cost.price, pastRuns)) } : {}),
  };
}

/** The run's summary told: its exit code, the notes it calls for, on stdout (or stderr for a run that stopped). */
async function told(session: EvaluationSession, client: ApiClient, summary: RunSummary, note: string | undefined, req: CliRunRequest, io: RunIo): Promise<{ summary: RunSummary; code: ExitCode }> {
  let code = await explainOutcome(summary, client, req);
  if (summary.outcome === 'completed') summary.message = completedNote(session, summary, req);
  if (note) summary.message = [note, summary.message].filter(Boolean).join('\n');
  if (req.submitSkipped !== undefined && summary.counts.skipped > 0 && (summary.outcome === 'completed' || summary.outcome === 'failedTraces')) {
    code = await submitSkippedAfter(session, client, summary, req.submitSkipped, code);
  }
  if (req.json) {
    const { error: _error, ...rest } = summary;
    io.stdout.write(`${safeJson(JSON.stringify({ type: 'summary', exitCode: code, ...rest }))}\n`);
  } else if (neverStarted(summary)) {
    // A run that could not start (a wrong token, a service away, no prompts yet) has no figures to show: its
    // reason alone, once, where errors go.
    io.stderr.write(`${safeText(`eval-runner run: ${summary.message}`)}\n`);
  } else if (stoppedEarly(summary)) {
    // The figures on stdout; why the run stopped, and what to do, where errors go (as with --json).
    io.stdout.write(`${safeText(summaryText(req.label, { ...summary, message: '' }))}\n`);
    if (summary.message) io.stderr.write(`${safeText(`eval-runner run: ${summary.message}`)}\n`);
  } else io.stdout.write(`${safeText(summaryText(req.label, summary))}\n`);
  return { summary, code };
}

/** A run that stopped before its end for a reason (an outage, the token, the disk, a cancel): not a finished one. */
function stoppedEarly(summary: RunSummary): boolean {
  return summary.outcome !== 'completed' && summary.outcome !== 'failedTraces';
}

/** What the session is told: the request's settings, and where its replay notes, progress and log lines go. */
function sessionOptions(req: CliRunRequest, io: RunIo, client: ApiClient, reporter: ReturnType<typeof progressReporter> | undefined): Omit<SessionRunOptions, 'target' | 'batch'> {
  return {
    client,
    identity: req.identity,
    tool: `eval-runner-cli ${TOOL_VERSION}`,
    ...(req.mode ? { mode: req.mode } : {}),
    ...(req.limit !== undefined ? { limit: req.limit } : {}),
    ...(req.shard ? { shard: req.shard } : {}),
    ...runOptionsIn(req),
    ...(io.signal ? { signal: io.signal } : {}),
    ...(io.drainSignal ? { drainSignal: io.drainSignal } : {}),
    progressIntervalMs: req.json ? 1000 : 200,
    onReplay: (replay, path) => {
      if (replay.tornTail) io.stderr.write(`Note: the journal's last line was cut short by an earlier crash; it was dropped (that trace is simply redone).\n`);
      if (replay.corruptLines) io.stderr.write(`${invalidLinesNote(replay.corruptLines, path)}\n`);
    },
    onProgress: (p) => {
      if (req.json) io.stdout.write(`${safeJson(JSON.stringify({ type: 'progress', ...p }))}\n`);
      else reporter!.update(p);
    },
    onLog: (level, message, final) => {
      // The reason the run stopped is said once, by the summary (or the fatal line) at the end.
      if (final && !req.json) return;
      if (level !== 'info' || !req.json) {
        reporter?.end();
        io.stderr.write(`${level === 'info' ? '' : `${level}: `}${safeText(message)}\n`);
      }
    },
  };
}

/** The run's options of a request (the fields RunOptions names). */
function runOptionsIn(req: CliRunRequest): RunOptions {
  const { concurrency, onTargetError, waitForGenerationMs, servicePatienceMs, targetTimeoutMs, targetRetries, maxRequestsPerMinute, holdAnswers, maxErrorRate } = req;
  return {
    concurrency,
    onTargetError,
    waitForGenerationMs,
    servicePatienceMs,
    targetTimeoutMs,
    holdAnswers,
    ...(targetRetries !== undefined ? { targetRetries } : {}),
    ...(maxRequestsPerMinute ? { maxRequestsPerMinute } : {}),
    ...(maxErrorRate ? { maxErrorRate } : {}),
  };
}

/** The exit code for the outcome, and a next step in the message where the outcome calls for one. */
async function explainOutcome(summary: RunSummary, client: ApiClient, req: CliRunRequest): Promise<ExitCode> {
  const notFound = summary.outcome === 'error' && isNotFound(summary.error);
  if (notFound) summary.message = `${summary.message ?? ''}${await otherKindHint(client, req.args)}`;
  // The API's advice (set a valid token) becomes the CLI's: said once, with where the token comes from.
  if (summary.outcome === 'auth' && summary.error instanceof ApiError && summary.message) summary.message = summary.message.replace(summary.error.hint, TOKEN_NEXT_STEP);
  // A target that cannot be set up at all (a module that fails to import) is the run's configuration.
  const setupFailed = summary.outcome === 'error' && summary.error instanceof TargetError && summary.error.details.setup;
  return notFound || setupFailed ? EXIT.usage : OUTCOME_EXIT[summary.outcome];
}

/** Nothing was sent to the target or the service, and the run stopped for a reason: a fatal error, not a summary. */
function neverStarted(s: RunSummary): boolean {
  return s.outcome !== 'completed' && s.outcome !== 'cancelled' && s.runId === undefined && s.targetCalls === 0 && s.submittedNow === 0 && s.message !== undefined;
}

/** --submit-skipped: the skipped traces get the not-answered text; a failure there fails the run's exit code. */
async function submitSkippedAfter(session: EvaluationSession, client: ApiClient, summary: RunSummary, text: string, code: ExitCode): Promise<ExitCode> {
  const done = await session.submitSkipped(client, text);
  summary.counts = session.store.snapshotCounts();
  const failedNote = done.failed.length ? `; ${done.failed.length} failed (first: ${done.failed[0]!.reason})` : '';
  summary.message = [summary.message, `--submit-skipped: ${done.submitted} skipped trace(s) submitted as not answered${failedNote}.`].filter(Boolean).join('\n');
  return done.failed.length && code === EXIT.ok ? EXIT.failedTraces : code;
}

function refused(result: RefusedRun, req: CliRunRequest, io: RunIo): { summary: RefusedRun; code: ExitCode } {
  // The failed traces first: after a fix, rerunning them is what the user came for.
  const failed = result.conflict.failed;
  const onlyFailed = failed ? [`  --only failed    rerun the ${failed} failed trace(s) with ${req.identity.description} as a new run; the other answers stay as they are`] : [];
  const message = [
    result.message,
    'Nothing was done. Choose how to go on:',
    ...onlyFailed,
    `  --fresh          answer every trace again with ${req.identity.description} and resubmit (the service keeps the last answer per trace)`,
    `  --reuse-answers  submit the journaled answers as they are; call ${req.identity.description} only for traces without one`,
  ].join('\n');
  if (req.json) io.stdout.write(`${safeJson(JSON.stringify({ type: 'summary', exitCode: EXIT.usage, outcome: result.outcome, message }))}\n`);
  else io.stderr.write(`${safeText(message)}\n`);
  return { summary: { ...result, message }, code: EXIT.usage };
}

/** What a run that ended well leaves to say: nothing to do, or what --limit and --no-submit left for later. */
function completedNote(session: EvaluationSession, s: RunSummary, req: CliRunRequest): string | undefined {
  const notes: string[] = [];
  if (s.runId === undefined && s.counts.submitted + s.counts.skipped >= s.total && s.total > 0) {
    const run = session.store.currentRun;
    const by = run ? `${run.target} in run ${run.runId} at ${new Date(run.startedAt).toISOString()}` : 'an earlier run';
    // A benchmark's list is fixed: with all of it journaled and submitted, the service was not asked again.
    const asked = session.key.kind === 'benchmark' && session.store.promptsRecorded && s.counts.submitted === s.total ? ' (the journal holds the whole list; the service was not asked)' : '';
    notes.push(`Nothing to do: every trace is already submitted by ${by}${asked}; --fresh answers again.`);
  }
  if (req.limit !== undefined && s.planned.wanted > s.planned.callTarget) {
    notes.push(
      `--limit ${req.limit}: ${s.planned.callTarget} of ${s.planned.wanted} trace(s) needing the target were sent; run again to go on.`,
    );
  }
  if (req.holdAnswers && s.counts.answered > 0) {
    notes.push(`--no-submit: ${s.counts.answered} answer(s) journaled and not submitted; run again with the same target to submit them.`);
  }
  return notes.length ? notes.join('\n') : undefined;
}

/** --only failed|bad|noted|ids:FILE */
function onlyOption(value: string | undefined): RerunSubset | undefined {
  if (value === undefined) return undefined;
  if (value.startsWith('ids:')) {
    const file = value.slice(4);
    try {
      return { ids: parseIdsFile(readFileSync(file, 'utf8')) };
    } catch (error) {
      throw new UsageError(`--only ids:${file}: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  if ((RERUN_SUBSETS as readonly string[]).includes(value)) return value as RerunSubset;
  throw new UsageError(`--only must be failed, bad, noted or ids:FILE (got "${value}").`);
}

export function invalidLinesNote(count: number, path: string): string {
  return `Note: ${count} line(s) of the journal ${path} are unreadable or not a record Eval Runner wrote; they were skipped and nothing is submitted from them.`;
}

/** `run`; `config`: the config file whose flags argv starts with (the rest are the command line's own). */
export async function runCommand(argv: string[], stdout: NodeJS.WritableStream, config?: ConfigFlags): Promise<number> {
  const v = parseCommandArgs(argv, RUN_FLAGS);
  if (v.help) {
    stdout.write(runHelp());
    return EXIT.ok;
  }
  const args = serviceArgs(v);
  if (v.fresh && v['reuse-answers']) throw new UsageError('Give --fresh or --reuse-answers, not both.');
  const request: Omit<CliRunRequest, 'target' | 'targetTimeoutMs' | 'identity'> = {
    args,
    token: tokenFromEnv(args.baseUrl),
    stateDir: stateDirOf(v['state-dir']),
    ...runOptionsOf(v),
    encoding: choiceOption(v.encoding, 'encoding', REQUEST_ENCODINGS, 'urlencoded'),
    journal: !v['no-journal'],
    json: v.json === true,
    label: `${args.kind} ${args.evaluationId}`,
    mode: v.fresh ? 'fresh' : v['reuse-answers'] ? 'reuse' : 'continue',
    ...(v.limit !== undefined ? { limit: intOption(v.limit, 'limit', 0, 1) } : {}),
  };
  const only = onlyOption(v.only);
  if (only && (v.fresh || v['reuse-answers'])) throw new UsageError('--only runs the chosen traces as a new run already: leave out --fresh and --reuse-answers.');
  if (only) request.only = only;
  if (v.shard !== undefined) {
    request.shard = shardOption(v.shard);
    request.label = `${request.label} (shard ${formatShard(request.shard)})`;
  }
  if (v['submit-skipped']) request.submitSkipped = v['skipped-answer'] ?? DEFAULT_SKIPPED_ANSWER;
  // Workers' stderr (python, worker targets): the user's own prints and tracebacks, shown as they come.
  const workerLog = (level: 'info' | 'warn', message: string) => {
    if (!request.json || level !== 'info') process.stderr.write(`${level === 'warn' ? 'warning: ' : ''}${safeText(message)}\n`);
  };
  // Where the token goes is allowed before anything is sent, as the target's variables are.
  // The flags the user typed, apart from the config file's: they count as allowing what they name.
  const own = ownValues(argv, config, RUN_FLAGS);
  await allowTokenOrigin(args.baseUrl, v, own, config);
  const plan = await allowedTargetPlan(v, own, config?.file);
  const { target, batch, identity, timeoutMs, warnings } = targetFromPlan(plan, v, request.concurrency, workerLog);
  request.cost = costChoices(v, plan.parts.spec);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  const signals = interruptSignals(process.stderr);
  try {
    const { code } = await executeRun(
      { ...request, target, ...(batch ? { batch } : {}), identity, targetTimeoutMs: timeoutMs },
      { stdout, stderr: process.stderr, drainSignal: signals.drain.signal, signal: signals.hard.signal },
    );
    return code;
  } finally {
    signals.dispose();
  }
}
