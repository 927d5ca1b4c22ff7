import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import type { EvaluationRef } from './registry';

export const REVIEW_SCHEME = 'evalrunner';

export interface ReviewTarget {
  ref: EvaluationRef;
  traceId: string;
  part: 'prompt' | 'answer';
}

/** Readable in tabs and breadcrumbs: /<evaluation label>/<trace id>/answer.txt; the evaluation key rides in the query. */
export function reviewUri(ref: EvaluationRef, traceId: string, part: 'prompt' | 'answer'): vscode.Uri {
  return vscode.Uri.from({
    scheme: REVIEW_SCHEME,
    path: `/${encodeURIComponent(ref.label)}/${encodeURIComponent(traceId)}/${part}.txt`,
    query: new URLSearchParams({ ref: ref.id }).toString(),
  });
}

export function parseReviewUri(ctx: Ctx, uri: vscode.Uri): ReviewTarget | undefined {
  if (uri.scheme !== REVIEW_SCHEME) return undefined;
  const [, traceId, file] = uri.path.split('/').filter(Boolean);
  const refId = new URLSearchParams(uri.query).get('ref');
  if (!refId || !traceId || (file !== 'prompt.txt' && file !== 'answer.txt')) return undefined;
  const ref = ctx.registry.find(refId);
  return ref ? { ref, traceId: decodeURIComponent(traceId), part: file === 'prompt.txt' ? 'prompt' : 'answer' } : undefined;
}

/**
 * Prompts and answers as virtual documents. The prompt is read-only; the answer is editable while it is not
 * submitted, and saving it journals the reviewer's text (it is then what gets submitted).
 */
export class ReviewFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly ctx: Ctx) {
    // Answers change under a run: tell open editors so they show the latest text.
    this.subscription = ctx.registry.onDidChangeSession((ref) => {
      const changes = vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === REVIEW_SCHEME && parseReviewUri(ctx, d.uri)?.ref.id === ref.id && !d.isDirty)
        .map((d) => ({ type: vscode.FileChangeType.Changed, uri: d.uri }));
      if (changes.length) this.emitter.fire(changes);
    });
  }

  private resolve(uri: vscode.Uri) {
    const target = parseReviewUri(this.ctx, uri);
    if (!target) throw vscode.FileSystemError.FileNotFound(uri);
    const session = this.ctx.registry.session(target.ref);
    const trace = session.store.get(target.traceId);
    if (!trace) throw vscode.FileSystemError.FileNotFound(uri);
    return { target, session, trace };
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const { target, trace } = this.resolve(uri);
    const text = target.part === 'prompt' ? trace.prompt ?? '' : trace.answer ?? '';
    const readonly = target.part === 'prompt' || trace.state === 'submitted' || trace.state === 'running';
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: trace.submittedAt ?? trace.answeredAt ?? 0,
      size: Buffer.byteLength(text),
      ...(readonly ? { permissions: vscode.FilePermission.Readonly } : {}),
    };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const { target, trace } = this.resolve(uri);
    return Buffer.from(target.part === 'prompt' ? trace.prompt ?? '' : trace.answer ?? '', 'utf8');
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const { target, session, trace } = this.resolve(uri);
    if (target.part === 'prompt') throw vscode.FileSystemError.NoPermissions('The prompt is read-only.');
    if (trace.state === 'submitted') throw vscode.FileSystemError.NoPermissions('This answer is already submitted.');
    await session.saveAnswer(target.traceId, Buffer.from(content).toString('utf8'));
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

/** "Submit Response" / "Approve and Submit" above an answer that is not submitted yet. */
export class ReviewCodeLens implements vscode.CodeLensProvider {
  constructor(private readonly ctx: Ctx) {}

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const target = parseReviewUri(this.ctx, document.uri);
    if (!target || target.part !== 'answer') return [];
    const trace = this.ctx.registry.session(target.ref).store.get(target.traceId);
    const range = new vscode.Range(0, 0, 0, 0);
    if (!trace) return [];
    const session = this.ctx.registry.session(target.ref);
    const run = session.store.runById(trace.answerRun);
    // Who answered: the target of the run that produced this answer, or the reviewer.
    const by = trace.answeredBy === 'user' ? 'Edited by you' : run ? `Answered by ${run.target} · run ${run.runId}` : undefined;
    const origin = by ? [new vscode.CodeLens(range, { title: by, command: '' })] : [];
    if (trace.state === 'submitted') return [new vscode.CodeLens(range, { title: '$(pass) Submitted', command: '' }), ...origin];
    const approve = this.ctx.settings.reviewBeforeSubmit && trace.answeredBy === 'target';
    return [
      new vscode.CodeLens(range, {
        title: approve ? '$(check) Approve and Submit' : '$(cloud-upload) Submit Response',
        command: 'evalRunner.submitResponse',
        arguments: [document.uri],
      }),
      new vscode.CodeLens(range, { title: 'Skip Trace', command: 'evalRunner.skipTrace', arguments: [document.uri] }),
      ...origin,
    ];
  }
}

/** Prompt on the left, answer on the right. */
export async function openReview(ref: EvaluationRef, traceId: string): Promise<void> {
  const prompt = await vscode.workspace.openTextDocument(reviewUri(ref, traceId, 'prompt'));
  await vscode.window.showTextDocument(prompt, { viewColumn: vscode.ViewColumn.One, preview: false });
  const answer = await vscode.workspace.openTextDocument(reviewUri(ref, traceId, 'answer'));
  await vscode.window.showTextDocument(answer, { viewColumn: vscode.ViewColumn.Two, preview: false });
}
