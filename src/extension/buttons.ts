import * as vscode from 'vscode';

/**
 * The labels of notification and dialog buttons, localised. A choice comes back as the label it was offered
 * with, so code offers and compares the same BUTTON value, never a literal that a translation would change.
 */
export const BUTTON = {
  get setToken(): string {
    return vscode.l10n.t('Set Token');
  },
  get openSettings(): string {
    return vscode.l10n.t('Open Settings');
  },
  get open(): string {
    return vscode.l10n.t('Open');
  },
  get runBoth(): string {
    return vscode.l10n.t('Run Both');
  },
  get remove(): string {
    return vscode.l10n.t('Remove');
  },
  get selectTarget(): string {
    return vscode.l10n.t('Select Target');
  },
  get showLogs(): string {
    return vscode.l10n.t('Show Logs');
  },
  get addEvaluation(): string {
    return vscode.l10n.t('Add Evaluation');
  },
  get trySandbox(): string {
    return vscode.l10n.t('Try the Local Sandbox');
  },
  get startFresh(): string {
    return vscode.l10n.t('Start Fresh');
  },
  get reuseAnswers(): string {
    return vscode.l10n.t('Reuse Answers');
  },
  get submitNotAnswered(): string {
    return vscode.l10n.t('Submit as Not Answered');
  },
  /** Opens the local Run Details panel (command evalRunner.showProgress); the service's page is Process Details. */
  get showProgress(): string {
    return vscode.l10n.t('Show Run Details');
  },
  /** Rerun Traces… on the failed traces (command evalRunner.retryFailed). */
  get retryFailed(): string {
    return vscode.l10n.t('Rerun Failed');
  },
};
