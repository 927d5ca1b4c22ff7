import * as vscode from 'vscode';
import { isEvaluationId, isEvaluationKind } from '../api/kinds';
import type { EvaluationKind, RequestEncoding } from '../api/kinds';
import type { OnTargetError } from '../core/engine';

export interface ConfiguredEvaluation {
  evaluationId: number;
  kind: EvaluationKind;
  label?: string;
}

export type TargetSettings =
  | { type: 'echo' }
  | { type: 'manual' }
  | { type: 'openai'; baseUrl: string; model: string; systemPrompt?: string; temperature?: number; maxTokens?: number }
  | { type: 'http'; url: string; method?: string; headers?: Record<string, string>; bodyTemplate?: string; answerPath: string }
  | { type: 'command'; command: string }
  | { type: 'vscode-lm'; model?: string };

export interface Settings {
  baseUrl: string;
  evaluations: ConfiguredEvaluation[];
  target: TargetSettings;
  concurrency: number;
  reviewBeforeSubmit: boolean;
  onTargetError: OnTargetError;
  processDetailsUrl: string;
  requestEncoding: RequestEncoding;
  waitForGenerationSeconds: number;
}

const SECTION = 'evalRunner';

/**
 * The one place settings are read. In an untrusted workspace the base URL and the command/HTTP targets
 * come only from user settings: a cloned repository must not point the token or a shell at anything.
 */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const trusted = vscode.workspace.isTrusted;
  const baseUrl = trusted ? config.get<string>('baseUrl', '') : (config.inspect<string>('baseUrl')?.globalValue ?? '');
  let target = (config.get<TargetSettings>('target') ?? { type: 'echo' }) as TargetSettings;
  if (!trusted && (target.type === 'command' || target.type === 'http')) {
    const user = config.inspect<TargetSettings>('target')?.globalValue;
    target = user ?? { type: 'echo' };
  }
  return {
    baseUrl: baseUrl.trim().replace(/\/+$/, ''),
    evaluations: readEvaluations(config.get<unknown>('evaluations')),
    target: normaliseTarget(target),
    concurrency: clamp(config.get<number>('concurrency', 8), 1, 256),
    reviewBeforeSubmit: config.get<boolean>('reviewBeforeSubmit', false),
    onTargetError: config.get<string>('onTargetError') === 'submit' ? 'submit' : 'fail',
    processDetailsUrl: config.get<string>('processDetailsUrl', '{baseUrl}/evaluations/{evaluationId}'),
    requestEncoding: config.get<string>('requestEncoding') === 'multipart' ? 'multipart' : 'urlencoded',
    waitForGenerationSeconds: clamp(config.get<number>('waitForGenerationSeconds', 600), 0, 86_400),
  };
}

function readEvaluations(value: unknown): ConfiguredEvaluation[] {
  if (!Array.isArray(value)) return [];
  const out: ConfiguredEvaluation[] = [];
  for (const v of value as Array<Record<string, unknown>>) {
    if (v && isEvaluationId(v.evaluationId) && isEvaluationKind(v.kind)) {
      out.push({ evaluationId: v.evaluationId, kind: v.kind, ...(typeof v.label === 'string' ? { label: v.label } : {}) });
    }
  }
  return out;
}

function normaliseTarget(t: TargetSettings): TargetSettings {
  const known = ['echo', 'manual', 'openai', 'http', 'command', 'vscode-lm'];
  return t && known.includes(t.type) ? t : { type: 'echo' };
}

function clamp(n: number, min: number, max: number): number {
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.floor(n))) : min;
}

export async function writeEvaluations(evaluations: ConfiguredEvaluation[]): Promise<void> {
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SECTION).update('evaluations', evaluations, target);
}

export async function writeTarget(target: TargetSettings): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update('target', target, vscode.ConfigurationTarget.Global);
}

export function processDetailsUrl(template: string, baseUrl: string, evaluationId: number, kind: EvaluationKind): string {
  return template.replace(/\{baseUrl\}/g, baseUrl).replace(/\{evaluationId\}/g, String(evaluationId)).replace(/\{kind\}/g, kind);
}

export function onSettingsChanged(listener: () => void): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) listener();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(listener),
  );
}
