// A run's prompts: the service's list journaled as it streams in (the run works on the ids listed), and read once
// more at the end. How the list itself is read, benchmark or robustness, is promptList.ts's.
import { ListWriter } from '../store/listWriter';
import type { HeldPrompts } from '../store/heldPrompts';
import type { PromptItem } from '../../api/schemas';
import type { Journal } from '../journal/journal';
import type { EngineOptions } from './engineOptions';
import { streamPromptsOf } from './promptList';
import { waitingText } from './runState';
import type { RunState } from './runState';
import type { TraceStore } from '../store/traceStore';

/**
 * The service's list (for robustness, after waiting for generation; the wait shows in progress), registered as it
 * comes; the ids listed. A benchmark's list is fixed: when the journal holds all of it and every trace is submitted,
 * there is nothing to list it again for (a run with nothing to do reads no 200 MB list). The prompts listed are held in
 * `held` for the run's target calls, within its bound.
 */
export async function listPrompts(options: EngineOptions, run: RunState, held?: HeldPrompts): Promise<ReadonlySet<string>> {
  const { client, kind, evaluationId, store } = options;
  const allDone = kind === 'benchmark' && options.runRecord?.mode !== 'fresh' && store.promptsRecorded && store.counts.submitted === store.total && store.total === store.listedTotal;
  if (options.journaledPrompts || allDone) {
    const journaled = new Set<string>();
    for (const t of store.traces.values()) if (t.hasPrompt) journaled.add(t.traceId);
    // A journal with no prompts yet (Run Trace before any list): listed after all.
    if (journaled.size > 0) return journaled;
  }
  const list = new ListWriter(store, options.journal, (m) => run.log('warn', m), held);
  if (options.prompts) {
    await list.add(options.prompts);
    return list.end();
  }
  if (kind === 'robustness') run.phase = 'waiting';
  // A first Ctrl-C (drain) ends the wait for generation too: while no prompt has come, nothing is in flight. Once the
  // list flows, only a second one (hard) stops it.
  let flowing = false;
  const stop = new AbortController();
  const stopWait = () => {
    if (!flowing || run.hardSignal.aborted) stop.abort(run.hardSignal.reason ?? new DOMException('The run was cancelled.', 'AbortError'));
  };
  if (run.stopping) stopWait();
  const unlisten = run.onStopping(stopWait);
  // Journaled as it streams in: a 600,000-prompt list is never held whole.
  try {
    await streamPromptsOf(client, kind, evaluationId, (batch) => {
      flowing = true;
      return list.add(batch);
    }, {
      waitForGenerationMs: options.waitForGenerationMs ?? 0,
      signal: stop.signal,
      onWait: (e) => {
        run.waiting = { reason: e.reason, nextCheckAt: Date.now() + e.delayMs };
        run.log('info', `Waiting for the adversarial prompts of evaluation ${evaluationId}: ${waitingText(run.waiting)}.`);
      },
    });
    run.waiting = undefined;
  } finally {
    // Kept, the listener's closure would keep the list writer and every id it saw (its context) for the whole run.
    unlisten();
  }
  return list.end();
}

/** What changed between the list a run started with and the list at its end. */
export interface ListChanges {
  /** Traces listed at the end and not at the start: run in the same run. */
  appeared: string[];
  /** Traces listed at the start and not at the end: reported, never failed. */
  vanished: string[];
}

/** Lists the prompts again after the last submission; undefined when the list could not be read (said, not fatal). */
export async function listAgain(
  options: EngineOptions,
  store: TraceStore,
  journal: Journal,
  run: RunState,
  before: ReadonlySet<string>,
): Promise<ListChanges | undefined> {
  let items: PromptItem[];
  try {
    items = await options.client.listPrompts(options.kind, options.evaluationId, { signal: run.hardSignal });
  } catch (error) {
    if (run.hardSignal.aborted) return undefined;
    run.log('warn', `The prompt list could not be read again at the end of the run (${error instanceof Error ? error.message : String(error)}); the run's answers stand.`);
    return undefined;
  }
  const after = new Set(items.map((p) => p.traceId));
  const changes = { appeared: [...after].filter((id) => !before.has(id)), vanished: [...before].filter((id) => !after.has(id)) };
  if (changes.appeared.length) {
    run.log('info', `The service lists ${changes.appeared.length} trace(s) more than at the start of the run (first: "${changes.appeared[0]}"); they run now.`);
    const list = new ListWriter(store, journal, (m) => run.log('warn', m));
    await list.add(items);
    await list.end();
  }
  if (changes.vanished.length) {
    run.log('warn', `${changes.vanished.length} trace(s) listed at the start are no longer listed by the service (first: "${changes.vanished[0]}"); they are reported, not failed.`);
  }
  return changes;
}
