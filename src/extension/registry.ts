import * as vscode from 'vscode';
import { parseBaseUrl } from '../api/client';
import type { EvaluationKind } from '../api/kinds';
import { EvaluationSession, sessionId } from '../core/session';
import type { SandboxController } from './sandboxController';
import type { Settings } from './settingsModel';

export interface EvaluationRef {
  /** Stable across reloads: origin, kind and id. */
  readonly id: string;
  readonly baseUrl: string;
  readonly origin: string;
  readonly evaluationId: number;
  readonly kind: EvaluationKind;
  readonly label: string;
  readonly source: 'configured' | 'sandbox';
}

/** The evaluations shown in this window (configured ones and the sandbox's) and their sessions. */
export class EvaluationRegistry implements vscode.Disposable {
  private refsList: EvaluationRef[] = [];
  private readonly sessions = new Map<string, EvaluationSession>();
  private readonly unsubscribe = new Map<string, () => void>();
  private readonly listEmitter = new vscode.EventEmitter<void>();
  private readonly sessionEmitter = new vscode.EventEmitter<EvaluationRef>();
  readonly onDidChangeList = this.listEmitter.event;
  readonly onDidChangeSession = this.sessionEmitter.event;

  constructor(
    private readonly stateDir: string,
    private readonly settings: () => Settings,
    private readonly sandbox: SandboxController,
  ) {}

  get refs(): readonly EvaluationRef[] {
    return this.refsList;
  }

  find(id: string): EvaluationRef | undefined {
    return this.refsList.find((r) => r.id === id);
  }

  refresh(): void {
    const s = this.settings();
    const refs: EvaluationRef[] = [];
    const sandbox = this.sandbox.sandbox;
    if (sandbox) {
      for (const e of sandbox.evaluations) {
        refs.push(makeRef(sandbox.baseUrl, e.evaluationId, e.kind, `Sandbox ${e.kind} ${e.evaluationId}`, 'sandbox'));
      }
    }
    for (const e of s.evaluations) {
      refs.push(makeRef(s.baseUrl, e.evaluationId, e.kind, e.label ?? `${capitalise(e.kind)} evaluation ${e.evaluationId}`, 'configured'));
    }
    this.refsList = refs.filter((r, i) => refs.findIndex((o) => o.id === r.id) === i);
    void vscode.commands.executeCommand('setContext', 'evalRunner.evaluationCount', this.refsList.length);
    this.listEmitter.fire();
  }

  session(ref: EvaluationRef): EvaluationSession {
    let session = this.sessions.get(ref.id);
    if (!session) {
      session = new EvaluationSession({ origin: ref.origin, kind: ref.kind, evaluationId: ref.evaluationId }, this.stateDir);
      this.sessions.set(ref.id, session);
      this.unsubscribe.set(ref.id, session.onDidChange(() => this.sessionEmitter.fire(ref)));
      void session.restore().catch(() => undefined);
    }
    return session;
  }

  dispose(): void {
    for (const session of this.sessions.values()) session.cancel(true);
    for (const off of this.unsubscribe.values()) off();
    this.listEmitter.dispose();
    this.sessionEmitter.dispose();
  }
}

function makeRef(baseUrl: string, evaluationId: number, kind: EvaluationKind, label: string, source: EvaluationRef['source']): EvaluationRef {
  let origin = 'unset';
  try {
    // The API module's own check: a base URL it would refuse (e.g. a path with //) is invalid here too.
    origin = baseUrl ? parseBaseUrl(baseUrl).origin : 'unset';
  } catch {
    origin = 'invalid';
  }
  return { id: sessionId({ origin, kind, evaluationId }), baseUrl, origin, evaluationId, kind, label, source };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
