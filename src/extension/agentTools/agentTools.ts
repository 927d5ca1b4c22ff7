// The agents' tools as the editor's language-model tools (issue 39): Copilot's agent mode and `#` references call
// them. Their declarations are package.json's contributes.languageModelTools (derived from the tool table, checked by
// a unit test), so registering needs only the names; the table itself (dist/agentToolCalls.js) loads on the first call.
import * as vscode from 'vscode';
import type * as AgentToolCalls from './agentToolCalls';
import type { Ctx } from '../ctx';
import type { RunController } from '../runs/runs';

/** The table's adapter: dist/agentToolCalls.js, built apart (scripts/build.mjs) and loaded when a tool is called. */
function calls(): typeof AgentToolCalls {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./agentToolCalls.js') as typeof AgentToolCalls;
}

/** The names package.json contributes (evalRunner_<tool>). */
export function agentToolNames(ctx: Ctx): string[] {
  const contributes = (ctx.extension.extension.packageJSON as { contributes?: { languageModelTools?: Array<{ name: string }> } }).contributes;
  return (contributes?.languageModelTools ?? []).map((t) => t.name);
}

/** One tool: its confirmation and its call, each through the table. */
export function agentToolOf(ctx: Ctx, runs: RunController, name: string): vscode.LanguageModelTool<unknown> {
  return {
    // An action's confirmation waits a few seconds at most for its estimate, and stops when the chat cancels. Plain
    // text: its reasons may quote a service's words.
    prepareInvocation: async (options, token) => {
      const asked = await calls().confirmationOf(ctx, runs, name, options.input, token);
      return asked ? { confirmationMessages: { title: asked.title, message: new vscode.MarkdownString().appendText(asked.message) } } : undefined;
    },
    invoke: async (options) => {
      const answer = await calls().invokeAgentTool(ctx, runs, name, options.input);
      // A mistake thrown is shown to the model as the tool's error, with its words naming the next step.
      if (answer.isError) throw new Error(answer.text);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(answer.text)]);
    },
  };
}

/** Registers every contributed tool; each registration is a Disposable. */
export function registerAgentTools(ctx: Ctx, runs: RunController): vscode.Disposable[] {
  return agentToolNames(ctx).map((name) => vscode.lm.registerTool(name, agentToolOf(ctx, runs, name)));
}
