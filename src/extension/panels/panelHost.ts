import * as vscode from 'vscode';
import type * as z from 'zod/mini';
import type { Ctx } from '../ctx';
import { Disposable } from '../lifecycle';
import { errorText } from '../log';
import type { EvaluationRef } from '../evaluations/registry';
import { webviewHtml } from './webviewHtml';

/** What the host asks of each kind of panel (Run Details, Compare Runs). */
export interface PanelKind<State extends { refId: string }, Panel extends PanelController> {
  viewType: string;
  /** The panel's name (its log lines, the page of a panel not restored). */
  title: string;
  /**
   * The tab's title: given when the panel is created, as a later title is one more message to the workbench and a
   * redraw of its tab while the panel opens (during a run too).
   */
  tabTitle(ref: EvaluationRef): string;
  /** What the page saves with setState: the restorer reads it with this schema after a reload. */
  stateSchema: z.ZodMiniType<State>;
  /** One panel per key: showing the same key again reveals it. */
  keyOf(state: State): string;
  create(panel: vscode.WebviewPanel, ref: EvaluationRef, state: State): Panel;
}

/**
 * The panel host both webviews share: the open panels by key, the webview options, the serializer that restores a
 * panel after a reload from the state its page saved, and the page shown when that state names an evaluation that
 * is no longer configured.
 */
export class PanelHost<State extends { refId: string }, Panel extends PanelController> extends Disposable {
  private readonly byKey = new Map<string, Panel>();

  constructor(
    private readonly ctx: Ctx,
    private readonly kind: PanelKind<State, Panel>,
  ) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(kind.viewType, { deserializeWebviewPanel: (panel, saved: unknown) => this.restore(panel, saved) }));
    this._register({ dispose: () => [...this.byKey.values()].forEach((p) => void p.panel.dispose()) });
  }

  /** Reveals the panel for this state, or opens one. */
  show(ref: EvaluationRef, state: State): Panel {
    const existing = this.byKey.get(this.kind.keyOf(state));
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(this.kind.viewType, this.kind.tabTitle(ref), vscode.ViewColumn.Active, this.options());
    return this.attach(panel, ref, state);
  }

  find(key: string): Panel | undefined {
    return this.byKey.get(key);
  }

  get panels(): IterableIterator<Panel> {
    return this.byKey.values();
  }

  private async restore(panel: vscode.WebviewPanel, saved: unknown): Promise<void> {
    const parsed = this.kind.stateSchema.safeParse(saved);
    const ref = parsed.success ? this.ctx.registry.find(parsed.data.refId) : undefined;
    if (!parsed.success || !ref) {
      this.ctx.log.info(`Not restoring a ${this.kind.title} panel: ${parsed.success ? `evaluation ${parsed.data.refId} is no longer configured` : 'its saved state is not one this version reads'}.`);
      panel.webview.html = fallbackPage(this.kind.title);
      return;
    }
    try {
      await this.attach(panel, ref, parsed.data).load();
    } catch (error) {
      this.ctx.log.error(`Restoring ${this.kind.title} failed: ${errorText(error)}`);
    }
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'media')] };
  }

  private attach(panel: vscode.WebviewPanel, ref: EvaluationRef, state: State): Panel {
    panel.webview.options = this.options();
    panel.iconPath = tabIcon(this.ctx.extension.extensionUri);
    // A restored panel's saved title may be another label's (the API sends nothing when it is the same).
    panel.title = this.kind.tabTitle(ref);
    const controller = this.kind.create(panel, ref, state);
    const key = this.kind.keyOf(state);
    this.byKey.set(key, controller);
    panel.onDidDispose(() => {
      controller.dispose();
      if (this.byKey.get(key) === controller) this.byKey.delete(key);
    });
    return controller;
  }
}

/**
 * One panel's side of the host: its page, validated messages in, typed messages out, and the ready handshake
 * (messages are sent only once the page said it listens; `onReady` sends everything it needs then).
 */
export abstract class PanelController<In extends { type: string } = { type: string }, Out = unknown> extends Disposable {
  private ready = false;

  protected constructor(
    protected readonly ctx: Ctx,
    readonly panel: vscode.WebviewPanel,
    protected readonly ref: EvaluationRef,
    private readonly page: { title: string; script: string; bodyClass?: string; appAttributes?: Readonly<Record<string, string>>; schema: z.ZodMiniType<In> },
  ) {
    super();
    panel.webview.html = webviewHtml(panel.webview, ctx.extension.extensionUri, { ...page, scripts: [page.script] });
    this._register(panel.webview.onDidReceiveMessage((raw: unknown) => this.receiveRaw(raw)));
  }

  protected get isReady(): boolean {
    return this.ready;
  }

  protected get session() {
    return this.ctx.registry.session(this.ref);
  }

  /** Loads what the panel shows (called once attached; again when the host shows it anew). */
  load(): Promise<void> {
    return Promise.resolve();
  }

  protected post(message: Out): void {
    void this.panel.webview.postMessage(message);
  }

  /** The page listens: send it everything. */
  protected abstract onReady(): void;

  protected abstract onMessage(message: In): void | Promise<void>;

  private receiveRaw(raw: unknown): void {
    const parsed = this.page.schema.safeParse(raw);
    if (!parsed.success) {
      this.ctx.log.warn(`Ignored a malformed message from the ${this.page.title} webview: ${parsed.error.issues[0]?.message ?? ''}`);
      return;
    }
    if (parsed.data.type === 'ready') {
      this.ready = true;
      this.onReady();
      return;
    }
    Promise.resolve(this.onMessage(parsed.data)).catch((error: unknown) => this.ctx.log.error(`${this.page.title}: ${errorText(error)}`));
  }
}

/** The tab's icon, drawn for light and dark themes. */
export function tabIcon(extensionUri: vscode.Uri): { light: vscode.Uri; dark: vscode.Uri } {
  return {
    light: vscode.Uri.joinPath(extensionUri, 'media', 'tab-light.svg'),
    dark: vscode.Uri.joinPath(extensionUri, 'media', 'tab-dark.svg'),
  };
}

/** What a restored panel shows when its evaluation is gone: a page with no script, saying so and what to do. */
function fallbackPage(title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><title>${title}</title></head><body><p>This evaluation is no longer configured: add it again in the Eval Runner view, then open ${title} from there.</p></body></html>`;
}
