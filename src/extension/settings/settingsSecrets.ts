// A credential written into settings (a header value, a key in the URL's query) leaves them: its value goes to secret
// storage for the target's origin, the settings keep its name. Done when the window starts and when settings change.
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { Disposable } from '../lifecycle';
import { errorText } from '../log';
import { onSettingsChanged } from './settings';
import { movedSettingsSecrets } from './settingsModel';
import type { TargetSettings } from './settingsModel';

export class SettingsSecrets extends Disposable {
  private moving: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: Ctx) {
    super();
    this._register(onSettingsChanged(() => void this.move()));
    void this.move();
  }

  /** One pass at a time: writing the settings back is itself a change of settings. */
  move(): Promise<void> {
    this.moving = this.moving.then(() => this.moveNow()).catch((error: unknown) => this.ctx.log.error(`Could not move a secret out of the settings: ${errorText(error)}`));
    return this.moving;
  }

  private async moveNow(): Promise<void> {
    if (this.isDisposed) return;
    const config = vscode.workspace.getConfiguration('evalRunner');
    const values = config.inspect<TargetSettings>('target');
    // The user's own settings; a workspace's only once it is trusted (an untrusted one must not fill secret storage).
    const scopes: Array<[TargetSettings | undefined, vscode.ConfigurationTarget]> = [[values?.globalValue, vscode.ConfigurationTarget.Global]];
    if (vscode.workspace.isTrusted) scopes.push([values?.workspaceValue, vscode.ConfigurationTarget.Workspace]);
    for (const [value, scope] of scopes) {
      if (!value || typeof value !== 'object') continue;
      const moved = movedSettingsSecrets(value);
      if (!moved) continue;
      for (const [name, secret] of Object.entries(moved.headers)) await this.ctx.tokens.setHeader(moved.origin, name, secret);
      for (const [name, secret] of Object.entries(moved.query)) await this.ctx.tokens.setQuery(moved.origin, name, secret);
      await config.update('target', moved.target, scope);
      const names = [...Object.keys(moved.headers), ...Object.keys(moved.query).map((n) => `?${n}=`)].join(', ');
      this.ctx.log.info(`Moved ${names} of the target from settings to secret storage for ${moved.origin}.`);
      void vscode.window.showInformationMessage(
        vscode.l10n.t('{0} held a credential in your settings: its value is now in secret storage, sent only to {1}; the settings keep its name.', names, moved.origin),
      );
    }
  }
}
