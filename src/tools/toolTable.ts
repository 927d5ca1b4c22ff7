// The one table of the agents' tools (issue 39): the MCP server (eval-runner mcp) and the editor's language-model
// tools are thin adapters over it. A call is checked against the tool's bounded schema and run; a mistake comes back
// as a tool error in words naming the next step, never as a crash of the host.
import * as z from 'zod/mini';
import { JournalLockedError, safeText } from '../core';
import { ACTION_TOOLS } from './actionTools';
import { READ_TOOLS } from './readTools';
import { guarded, redactor } from './resultGuard';
import { ToolError } from './toolKit';
import type { AgentTool, ToolContext, ToolResult } from './toolKit';

export type { AgentTool, RunStarter, StartRequest, ToolContext, ToolHints, ToolResult } from './toolKit';
export { ToolError } from './toolKit';

/** Every tool: the reads first, then the actions. */
export const AGENT_TOOLS: readonly AgentTool[] = [...READ_TOOLS, ...ACTION_TOOLS];

/** A tool's answer: its result, or an error in words (`isError`). */
export type ToolAnswer = (ToolResult & { isError?: false }) | { isError: true; text: string };

/** Runs one tool on an input as the agent sent it: checked, run, and any failure told in words; no secret of the host's in either. */
export async function callTool(tool: AgentTool, input: unknown, context: ToolContext): Promise<ToolAnswer> {
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) return { isError: true, text: `${tool.name}: ${inputProblem(parsed.error)} See the tool's input schema.` };
  const clean = redactor((await context.secrets?.()) ?? []);
  try {
    return guarded(await tool.run(parsed.data, { ...context, redact: clean }), clean);
  } catch (error) {
    return { isError: true, text: clean(safeText(failureText(tool, error))) };
  }
}

/** A ToolError names its next step; a locked journal is a run going on; anything else is said as it is, with one. */
function failureText(tool: AgentTool, error: unknown): string {
  if (error instanceof ToolError) return error.message;
  if (error instanceof JournalLockedError) return `${tool.name} cannot act now: another Eval Runner process holds this evaluation's journal (a run going on). Follow it with get_run_status, or stop it with cancel_run, then ask again.`;
  const message = error instanceof Error ? error.message : String(error);
  return `${tool.name} failed: ${message.replace(/[\s.]+$/, '')}. get_run_status tells where the evaluation stands.`;
}

/** The schema's complaints in a line, each field and what it must be (zod/mini's own messages say "Invalid input"). */
export function inputProblem(error: z.core.$ZodError): string {
  return error.issues.slice(0, 5).map((issue) => `${issue.path.length ? issue.path.join('.') : 'the input'} ${issueWords(issue)}`).join('; ') + '.';
}

function issueWords(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : ''}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      return `must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : ''}`;
    case 'invalid_type':
      return `must be ${issue.expected === 'int' ? 'a whole number' : `a ${issue.expected}`}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `has ${issue.keys.map((k) => `"${k.slice(0, 50)}"`).join(', ')}, which this tool does not take (the target, paths and secrets come from the server's configuration)`;
    default:
      return 'is not valid here';
  }
}

/** A tool's input as JSON Schema (package.json's languageModelTools, and the MCP listing, derive from this). */
export function inputJsonSchema(tool: AgentTool): Record<string, unknown> {
  const { $schema: _schema, ...schema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  return schema;
}

/** One entry of package.json's contributes.languageModelTools, as VS Code 1.100 reads it. */
export interface LanguageModelToolContribution {
  name: string;
  displayName: string;
  modelDescription: string;
  userDescription: string;
  /** The reads only: a user can attach them with `#` in chat. */
  toolReferenceName?: string;
  canBeReferencedInPrompt: boolean;
  icon: string;
  inputSchema: Record<string, unknown>;
}

/**
 * The editor's language-model tools as package.json contributes them, derived from the table (issue 39, part 4: the
 * extension's adapter registers `evalRunner_<tool>` with vscode.lm.registerTool; a unit test compares package.json).
 */
export function languageModelTools(): LanguageModelToolContribution[] {
  return AGENT_TOOLS.map((t) => ({
    name: `evalRunner_${t.name}`,
    displayName: `Eval Runner: ${t.title}`,
    modelDescription: t.description,
    userDescription: t.description.split('. ')[0]!.replace(/\.?$/, '.'),
    ...(t.hints.readOnlyHint ? { toolReferenceName: `evalRunner_${t.name}` } : {}),
    canBeReferencedInPrompt: t.hints.readOnlyHint,
    icon: '$(beaker)',
    inputSchema: inputJsonSchema(t),
  }));
}
