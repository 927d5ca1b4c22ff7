import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { COMMANDS } from '../../src/extension/commands';

const EXTENSION_ID = 'eval-runner.eval-runner';

describe('extension activation', () => {
  it('is installed in this editor and activates', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is loaded`);
    await extension.activate();
    assert.equal(extension.isActive, true);
  });

  it('registers exactly the commands package.json declares', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    await extension.activate();
    const pkg = JSON.parse(readFileSync(join(extension.extensionPath, 'package.json'), 'utf8')) as {
      contributes: { commands: Array<{ command: string }> };
    };
    const declared = pkg.contributes.commands.map((c) => c.command).sort();
    // Commands VS Code itself generates for the view (focus, reset location...) are not ours.
    const registered = (await vscode.commands.getCommands(true)).filter((c) => c.startsWith('evalRunner.') && !c.startsWith('evalRunner.evaluations.')).sort();
    assert.deepEqual(registered, declared);
    assert.deepEqual(Object.keys(COMMANDS).sort(), declared);
    for (const id of ['evalRunner.addEvaluation', 'evalRunner.removeEvaluation', 'evalRunner.fetchPrompts', 'evalRunner.runEvaluation',
      'evalRunner.runTrace', 'evalRunner.submitResponse', 'evalRunner.retryFailed', 'evalRunner.skipTrace', 'evalRunner.cancelRun',
      'evalRunner.showProgress', 'evalRunner.openTrace', 'evalRunner.exportResults', 'evalRunner.openProcessDetails',
      'evalRunner.setToken', 'evalRunner.clearToken', 'evalRunner.selectTarget', 'evalRunner.startSandbox', 'evalRunner.stopSandbox']) {
      assert.ok(declared.includes(id), `the contract command ${id} is declared`);
    }
  });
});
