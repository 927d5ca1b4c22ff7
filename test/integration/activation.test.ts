import assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'eval-runner.eval-runner';

describe('extension activation', () => {
  it('is installed in this editor and activates', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is loaded`);
    await extension.activate();
    assert.equal(extension.isActive, true);
  });
});
