import * as vscode from 'vscode';
import { debuggable } from '../../core';
import { Disposable } from '../lifecycle';
import type { Ctx } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';

export const REVIEW_SCHEME = 'evalrunner';

export interface ReviewTarget {
  ref: EvaluationRef;
  traceId: string;
  part: 'prompt' | 'answer';
}

/**
 * Readable in tabs and breadcrumbs: /<evaluation label>/<trace id>/answer.txt, both as they are (a "/" in
 * them shown as "∕", so the path keeps its three parts); what the document is rides in the query.
 */
export function reviewUri(ref: EvaluationRef, traceId: string, part: 'prompt' | 'answer'): vscode.Uri {
  return vscode.Uri.from({
    scheme: REVIEW_SCHEME,
    path: `/${shown(ref.label)}/${shown(traceId)}/${part}.txt`,
    query: new URLSearchParams({ ref: ref.id, trace: traceId }).toString(),
  });
}

function shown(text: string): string {
  // Path separators and controls would split or garble the breadcrumb; everything else stays as written.
  return text.replace(/[/\\]/g, '\u2215').replace(/[\u0000-\u001f\u007f]/g, ' ') || '_';
}

export function parseReviewUri(ctx: Ctx, uri: vscode.Uri): ReviewTarget | undefined {
  if (uri.scheme !== REVIEW_SCHEME) return undefined;
  const file = uri.path.split('/').pop();
  const query = new URLSearchParams(uri.query);
  const refId = query.get('ref');
  const traceId = query.get('trace');
  if (!refId || !traceId || (file !== 'prompt.txt' && file !== 'answer.txt')) return undefined;
  const ref = ctx.registry.find(refId);
  return ref ? { ref, traceId, part: file === 'prompt.txt' ? 'prompt' : 'answer' } : undefined;
}

/** Whether an editor in view shows a trace of this evaluation. */
function reviewShown(ctx: Ctx, refId: string): boolean {
  return vscode.window.visibleTextEditors.some((e) => parseReviewUri(ctx, e.document.uri)?.ref.id === refId);
}

/**
 * Prompts and answers as virtual documents. The prompt is read-only; the answer is editable while it is not
 * submitted, and saving it journals the reviewer's text (it is then what gets submitted).
 */
export class ReviewFileSystem extends Disposable implements vscode.FileSystemProvider {
  private readonly emitter = this._register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  readonly onDidChangeFile = this.emitter.event;

  constructor(private readonly ctx: Ctx) {
    super();
    // Answers change under a run: tell open editors so they show the latest text.
    this._register(ctx.registry.onDidChangeSession((ref) => {
      const changes = vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === REVIEW_SCHEME && parseReviewUri(ctx, d.uri)?.ref.id === ref.id && !d.isDirty)
        .map((d) => ({ type: vscode.FileChangeType.Changed, uri: d.uri }));
      if (changes.length) this.emitter.fire(changes);
    }));
    // A trace shown in an editor: a run followed in another process is read from its journal meanwhile.
    this._register(ctx.registry.showsRows((refId) => reviewShown(ctx, refId)));
  }

  private async resolve(uri: vscode.Uri) {
    const target = parseReviewUri(this.ctx, uri);
    if (!target) throw vscode.FileSystemError.FileNotFound(uri);
    const session = this.ctx.registry.session(target.ref);
    // A session made a moment ago (settings changed, a window restored its tabs) may not have read its journal yet.
    if (!session.store.get(target.traceId)) await session.load();
    const trace = session.store.get(target.traceId);
    if (!trace) throw vscode.FileSystemError.FileNotFound(uri);
    return { target, session, trace };
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { target, trace } = await this.resolve(uri);
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

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { target, trace } = await this.resolve(uri);
    return Buffer.from(target.part === 'prompt' ? trace.prompt ?? '' : trace.answer ?? '', 'utf8');
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const { target, session, trace } = await this.resolve(uri);
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
}

/**
 * Above an answer: Submit (or Approve and Submit) while it is not submitted, Skip, the reviewer's verdict and
 * note, the way to the previous and next trace, and who answered.
 */
export class ReviewCodeLens extends Disposable implements vscode.CodeLensProvider {
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(private readonly ctx: Ctx) {
    super();
    // Only for an answer shown of that evaluation: a run changes its session a few times a second, and each event
    // went to the workbench for nothing.
    this._register(ctx.registry.onDidChangeSession((ref) => reviewShown(ctx, ref.id) && this.emitter.fire()));
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const target = parseReviewUri(this.ctx, document.uri);
    if (!target || target.part !== 'answer') return [];
    const session = this.ctx.registry.session(target.ref);
    const trace = session.store.get(target.traceId);
    if (!trace) return [];
    const range = new vscode.Range(0, 0, 0, 0);
    const lens = (title: string, command = '', ...args: unknown[]) => new vscode.CodeLens(range, { title, command, arguments: args });
    const run = session.store.runById(trace.answerRun);
    // Who answered: the target of the run that produced this answer, or the reviewer.
    const by = trace.answeredBy === 'user' ? 'Edited by you' : run ? `Answered by ${run.target} · run ${run.runId}` : undefined;
    const lenses: vscode.CodeLens[] = [];
    if (trace.state === 'submitted') lenses.push(lens('$(pass) Submitted'));
    else {
      const approve = this.ctx.settings.reviewBeforeSubmit && trace.answeredBy === 'target';
      lenses.push(lens(approve ? '$(check) Approve and Submit' : '$(cloud-upload) Submit Response', 'evalRunner.submitResponse', document.uri));
      lenses.push(lens('Skip Trace', 'evalRunner.skipTrace', document.uri));
    }
    if (trace.hasAnswer) {
      lenses.push(lens(trace.rating === 'good' ? '$(thumbsup) Good ✓' : '$(thumbsup) Good', 'evalRunner.markGood', document.uri));
      lenses.push(lens(trace.rating === 'bad' ? '$(thumbsdown) Bad ✓' : '$(thumbsdown) Bad', 'evalRunner.markBad', document.uri));
      lenses.push(lens(trace.note ? `$(note) Note: ${oneLine(trace.note, 60)}` : '$(note) Add Note', 'evalRunner.editNote', document.uri));
    }
    if (debuggable(this.ctx.settings.target)) lenses.push(lens('$(debug-alt) Debug Trace', 'evalRunner.debugTrace', document.uri));
    lenses.push(lens('$(arrow-left) Previous', 'evalRunner.previousTrace', document.uri), lens('Next $(arrow-right)', 'evalRunner.nextTrace', document.uri));
    if (by) lenses.push(lens(by));
    return lenses;
  }
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The language of review documents: plain text whose long lines wrap (a configuration default in package.json). */
export const REVIEW_LANGUAGE = 'evalrunner-review';

/**
 * A context key for the active review editor, so its title bar and keybindings offer Submit only where it can
 * act: evalRunner.reviewSubmittable (an answer not yet submitted).
 * Also gives every review document its wrapping language, however it was opened (a restored tab included).
 */
export class ReviewContext extends Disposable {
  private submittable: boolean | undefined;

  constructor(private readonly ctx: Ctx) {
    super();
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.update()));
    this._register(ctx.registry.onDidChangeSession(() => this.update()));
    this._register(vscode.workspace.onDidOpenTextDocument((d) => void this.wrap(d)));
    for (const d of vscode.workspace.textDocuments) void this.wrap(d);
    this.update();
  }

  private async wrap(document: vscode.TextDocument): Promise<void> {
    if (document.uri.scheme === REVIEW_SCHEME && document.languageId !== REVIEW_LANGUAGE) {
      await vscode.languages.setTextDocumentLanguage(document, REVIEW_LANGUAGE).then(undefined, () => undefined);
    }
  }

  private update(): void {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const target = uri ? parseReviewUri(this.ctx, uri) : undefined;
    const trace = target ? this.ctx.registry.session(target.ref).store.get(target.traceId) : undefined;
    const submittable = target?.part === 'answer' && trace !== undefined && trace.state !== 'submitted' && trace.state !== 'running';
    // Sessions change many times a second under a run: the key is sent only when it changes.
    if (submittable !== this.submittable) void vscode.commands.executeCommand('setContext', 'evalRunner.reviewSubmittable', (this.submittable = submittable));
  }
}

/** Prompt on the left, answer on the right. */
export async function openReview(ref: EvaluationRef, traceId: string, options: { preview?: boolean } = {}): Promise<void> {
  const open = async (part: 'prompt' | 'answer') => {
    const document = await vscode.workspace.openTextDocument(reviewUri(ref, traceId, part));
    return document.languageId === REVIEW_LANGUAGE ? document : vscode.languages.setTextDocumentLanguage(document, REVIEW_LANGUAGE);
  };
  // Walking traces (Next/Previous) reuses the preview tabs instead of leaving two tabs behind per trace.
  const preview = options.preview ?? false;
  await vscode.window.showTextDocument(await open('prompt'), { viewColumn: vscode.ViewColumn.One, preview, preserveFocus: true });
  await vscode.window.showTextDocument(await open('answer'), { viewColumn: vscode.ViewColumn.Two, preview });
}

/**
 * Closes a trace's review tabs in every group (Next and Previous replace them rather than leave two tabs behind per
 * trace); a tab with unsaved changes stays, so no edit is lost or asked about.
 */
export async function closeReview(ctx: Ctx, ref: EvaluationRef, traceId: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((tab) => {
    const target = tab.input instanceof vscode.TabInputText && !tab.isDirty ? parseReviewUri(ctx, tab.input.uri) : undefined;
    return target?.ref.id === ref.id && target.traceId === traceId;
  });
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}

/** The trace before or after this one, in the service's list order (wrapping around). */
export function neighbourTrace(ctx: Ctx, ref: EvaluationRef, traceId: string, step: 1 | -1): string | undefined {
  const ids = [...ctx.registry.session(ref).store.traces.keys()];
  if (ids.length === 0) return undefined;
  const at = ids.indexOf(traceId);
  return ids[(at + step + ids.length) % ids.length];
}
