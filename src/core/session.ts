import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ApiClient } from '../api/client';
import type { PromptItem } from '../api/schemas';
import { runEvaluation } from './engine';
import type { EngineOptions, RunProgress, RunSummary } from './engine';
import { journalPath, openJournal, readJournal } from './journal';
import type { Journal, JournalKey } from './journal';
import { TraceStore } from './traceStore';

export type SessionKey = JournalKey;

export type SessionRunOptions = Omit<EngineOptions, 'client' | 'kind' | 'evaluationId' | 'journal' | 'store' | 'signal' | 'drainSignal'> & {
  client: ApiClient;
  /** Use the prompts fetched last instead of listing again (Run Trace, Retry Failed). */
  reuseFetchedPrompts?: boolean;
};

/**
 * One evaluation as an editor sees it: its traces (journal + last fetched prompts), its run, and the
 * single-trace operations of review. The journal is opened (and locked) only for the length of an
 * operation, so several windows can show the same evaluation.
 */
export class EvaluationSession {
  store = new TraceStore();
  lastProgress: RunProgress | undefined;
  lastSummary: RunSummary | undefined;
  lastRunAt: number | undefined;
  /** Journal lines skipped at the last read: unreadable or not of a known shape (never acted on). */
  invalidLines = 0;
  private running: { drain: AbortController; hard: AbortController; done: Promise<RunSummary> } | undefined;
  private readonly listeners = new Set<() => void>();
  private fetched: PromptItem[] | undefined;

  constructor(
    readonly key: SessionKey,
    private readonly stateDir: string,
  ) {}

  get journalFile(): string {
    return journalPath(this.stateDir, this.key);
  }

  get promptsFile(): string {
    return this.journalFile.replace(/\.jsonl$/, '.prompts.json');
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  get hasPrompts(): boolean {
    return this.store.traces.size > 0 || (this.store.listedTotal ?? 0) > 0;
  }

  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const l of this.listeners) l();
  }

  /** Rebuilds the traces from disk: the journal, then the prompts fetched last. */
  async load(): Promise<void> {
    const replay = await readJournal(this.journalFile);
    this.invalidLines = replay.corruptLines;
    this.store = this.rebuild(replay.records);
    this.changed();
  }

  async fetchPrompts(client: ApiClient, options: { signal?: AbortSignal; waitForGenerationMs?: number; onWait?: (reason: string) => void } = {}): Promise<number> {
    const items =
      this.key.kind === 'robustness'
        ? await client.waitForPrompts(this.key.kind, this.key.evaluationId, {
            timeoutMs: options.waitForGenerationMs ?? 0,
            ...(options.signal ? { signal: options.signal } : {}),
            onWait: (e) => options.onWait?.(e.reason),
          })
        : await client.listPrompts(this.key.kind, this.key.evaluationId, options.signal ? { signal: options.signal } : {});
    await this.savePrompts(items);
    if (!this.running) await this.load();
    return items.length;
  }

  /** Runs the evaluation (or only some traces) through the core engine. One run at a time. */
  async run(options: SessionRunOptions): Promise<RunSummary> {
    if (this.running) throw new Error('This evaluation is already running.');
    const drain = new AbortController();
    const hard = new AbortController();
    const done = this.withJournal(async (journal) => {
      const { client, reuseFetchedPrompts, onProgress, ...rest } = options;
      const prompts = reuseFetchedPrompts ? await this.loadPrompts() : undefined;
      const summary = await runEvaluation({
        ...rest,
        client,
        kind: this.key.kind,
        evaluationId: this.key.evaluationId,
        journal,
        store: this.store,
        signal: hard.signal,
        drainSignal: drain.signal,
        ...(prompts ? { prompts } : {}),
        onProgress: (p) => {
          this.lastProgress = p;
          onProgress?.(p);
          this.changed();
        },
      });
      if (!reuseFetchedPrompts) await this.savePromptsFromStore();
      return summary;
    });
    this.running = { drain, hard, done };
    this.lastRunAt = Date.now();
    this.changed();
    try {
      const summary = await done;
      this.lastSummary = summary;
      return summary;
    } finally {
      this.running = undefined;
      this.changed();
    }
  }

  /** First call: finish in-flight traces and stop; `hard`: abort them too. */
  cancel(hard = false): void {
    if (!this.running) return;
    if (hard || this.running.drain.signal.aborted) this.running.hard.abort();
    else this.running.drain.abort();
  }

  /** Keeps a reviewer's edit of an answer (not submitted yet). */
  async saveAnswer(traceId: string, answer: string): Promise<void> {
    await this.withJournal(async (journal) => {
      const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), by: 'user' as const };
      await journal.append(record);
      this.store.apply(record);
    });
  }

  /** Submits one trace's answer (the given text, or the journaled one), journaling both steps. */
  async submitAnswer(client: ApiClient, traceId: string, answer?: string): Promise<void> {
    await this.withJournal(async (journal) => {
      const info = this.store.get(traceId);
      const text = answer ?? info?.answer;
      if (text === undefined) throw new Error(`Trace "${traceId}" has no answer to submit yet.`);
      if (answer !== undefined && answer !== info?.answer) {
        const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), by: 'user' as const };
        await journal.append(record);
        this.store.apply(record);
      }
      const result = await client.submitAnswer(this.key.kind, this.key.evaluationId, traceId, text);
      const record = { t: 'submitted' as const, id: traceId, at: Date.now(), ...(result.requestCode ? { code: result.requestCode } : {}) };
      await journal.append(record);
      this.store.apply(record);
    });
  }

  async skip(traceId: string, reason: string): Promise<void> {
    await this.withJournal(async (journal) => {
      const record = { t: 'skipped' as const, id: traceId, reason, at: Date.now() };
      await journal.append(record);
      this.store.apply(record);
    });
  }

  private async withJournal<T>(fn: (journal: Journal) => Promise<T>): Promise<T> {
    const { journal, replay } = await openJournal(this.journalFile);
    try {
      this.invalidLines = replay.corruptLines;
      this.store = this.rebuild(replay.records);
      return await fn(journal);
    } finally {
      await journal.close();
      this.changed();
    }
  }

  private rebuild(records: Parameters<typeof TraceStore.fromRecords>[0]): TraceStore {
    const store = TraceStore.fromRecords(records);
    if (this.fetched) store.setListed(this.fetched);
    return store;
  }

  private async loadPrompts(): Promise<PromptItem[] | undefined> {
    if (this.fetched) return this.fetched;
    try {
      this.fetched = JSON.parse(await readFile(this.promptsFile, 'utf8')) as PromptItem[];
    } catch {
      return undefined;
    }
    return this.fetched;
  }

  /** Loads the prompts fetched in an earlier session (the tree shows them before any run). */
  async restore(): Promise<void> {
    await this.loadPrompts();
    await this.load();
  }

  private async savePrompts(items: PromptItem[]): Promise<void> {
    this.fetched = items;
    await mkdir(dirname(this.promptsFile), { recursive: true, mode: 0o700 });
    // Write then rename: a crash never leaves half a snapshot.
    const tmp = `${this.promptsFile}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(items), { mode: 0o600 });
    await rename(tmp, this.promptsFile);
  }

  private async savePromptsFromStore(): Promise<void> {
    const items: PromptItem[] = [];
    for (const t of this.store.traces.values()) if (t.prompt !== undefined) items.push({ traceId: t.traceId, content: t.prompt });
    if (items.length) await this.savePrompts(items);
  }
}

export function sessionId(key: SessionKey): string {
  return `${key.origin}|${key.kind}|${key.evaluationId}`;
}

