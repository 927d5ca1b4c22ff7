import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { until } from './until';

/**
 * The completions VS Code's own JSON support offers in the user's settings.json at `|` in `entry`, an entry put first in
 * the file's object. The file's other settings stay (the harness's turn workspace trust off: a settings.json saved
 * without them, as the editor may save it while completions are asked for, turned trust on and reloaded the window,
 * which ran the whole suite again), and the file is written back as it was.
 */
async function completionsAt(entry: string, expected: string): Promise<string[]> {
  await vscode.commands.executeCommand('workbench.action.openSettingsJson');
  await until('settings.json is open', () => vscode.window.activeTextEditor?.document.uri.path.endsWith('settings.json') === true);
  const editor = vscode.window.activeTextEditor!;
  const original = editor.document.getText();
  const brace = original.indexOf('{') + 1;
  const inserted = `\n  ${entry.replace('|', '')},`;
  const whole = () => new vscode.Range(editor.document.positionAt(0), editor.document.positionAt(editor.document.getText().length));
  await editor.edit((e) => e.replace(whole(), original.slice(0, brace) + inserted + original.slice(brace)));
  const position = editor.document.positionAt(brace + 3 + entry.indexOf('|'));
  let labels: string[] = [];
  // The JSON language server starts with the first settings.json (until then, only words of the text are offered): asked
  // again until it answers from the schema, for 40 s at most.
  for (let tries = 0; tries < 80 && !labels.includes(expected); tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 500));
    const list = await vscode.commands.executeCommand<vscode.CompletionList>('vscode.executeCompletionItemProvider', editor.document.uri, position);
    labels = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label).replace(/^"|"$/g, ''));
  }
  const uri = editor.document.uri;
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  // Written back whole: the editor may have saved the entry meanwhile.
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(original));
  return labels;
}

describe("evalRunner.target in settings.json: every kind's keys, from the kinds' descriptors", () => {
  it('completes the keys of the kind `type` names: openai, http and command, not only python', async () => {
    const openai = await completionsAt('"evalRunner.target": { "type": "openai", | }', 'baseUrl');
    for (const key of ['baseUrl', 'model', 'temperature', 'maxTokens', 'stream', 'secretHeaders']) assert.ok(openai.includes(key), `openai: ${key} in ${openai.join(', ')}`);
    assert.ok(!openai.includes('answerPath') && !openai.includes('file'), `another kind's keys: ${openai.join(', ')}`);
    const http = await completionsAt('"evalRunner.target": { "type": "http", | }', 'url');
    for (const key of ['url', 'answerPath', 'bodyTemplate', 'ssePath', 'headers']) assert.ok(http.includes(key), `http: ${key} in ${http.join(', ')}`);
    const command = await completionsAt('"evalRunner.target": { "type": "command", | }', 'command');
    assert.ok(command.includes('command'), `command: ${command.join(', ')}`);
  });
});
