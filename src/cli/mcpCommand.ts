// `eval-runner mcp`: the agents' tools (src/tools) as a Model Context Protocol server over stdio. Stdout is the
// protocol; every word for a person goes to stderr. The flags and --config file are `run`'s, the defaults of
// start_run; the token comes from EVAL_RUNNER_TOKEN, never from a tool's arguments.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EVALUATION_KINDS } from '../api/evaluationKinds';
import { parseBaseUrl } from '../api/transport';
import { heldSecrets, isAlive, REQUEST_ENCODINGS, TOOL_VERSION } from '../core';
import { AGENT_TOOLS, callTool, inputJsonSchema, ToolError } from '../tools/toolTable';
import type { RunStarter, ToolContext } from '../tools/toolTable';
import { choiceOption, intOption, parseCommandArgs } from './args';
import { CONFIG_HELP, explain, SERVICE_HELP, serviceArgs, stateDirOf } from './common';
import type { ConfigFlags } from './configFile';
import { costChoices } from './costFlags';
import { EXIT, UsageError } from './exitCodes';
import { mcpRunStarter } from './mcpRuns';
import { RUN_FLAGS, runOptionsOf } from './runFlags';
import { allowedTargetPlan, targetHelp } from './targetOptions';
import { allowTokenOrigin, ownValues } from './tokenOrigin';
import { safeText } from './terminalText';

const mcpHelp = (): string => `Usage: eval-runner mcp [--config FILE] [run's flags: --base-url URL --evaluation ID --kind KIND --target KIND ...]

A Model Context Protocol server on stdio for coding agents (VS Code, Claude Code, Cursor): its tools list
evaluations, follow a run, list and read traces, compare runs, estimate, start, pause, resume, cancel and rerun.
Stdout is the protocol; logs go to stderr. Add it to your agent's MCP configuration (docs/agents.md).

The flags are run's, and they are start_run's defaults: the agent chooses the evaluation, the mode and the
concurrency, never the target, a path or a variable. A run started by a tool goes on in a runner process of its
own: it finishes when the agent's session ends, and status, list and the editor show it.

${SERVICE_HELP}
${CONFIG_HELP}
  --state-dir DIR             where journals live (default: run's)
  --concurrency N             start_run's default
${targetHelp()}

The personal access token is read from EVAL_RUNNER_TOKEN in the server's environment (the "env" of its entry in
the agent's configuration); without it the tools still read journals, and start_run says what to set.
`;

// run's flags that make no sense for a server whose tools choose what to run.
const NOT_FOR_MCP = ['no-journal', 'json', 'limit', 'shard', 'only', 'estimate', 'submit-skipped', 'skipped-answer', 'fresh', 'reuse-answers', 'budget'] as const;

export async function mcpCommand(argv: string[], stdout: NodeJS.WritableStream, config?: ConfigFlags): Promise<number> {
  try {
    return await serveCommand(argv, stdout, config);
  } catch (error) {
    // Told here, not by main.ts: this bundle (dist/mcp.js) has its own error classes, which main's instanceof would not know.
    const { message, code } = explain(error);
    process.stderr.write(`${safeText(`eval-runner mcp: ${message}${code === EXIT.usage ? '\nRun "eval-runner mcp --help" for usage.' : ''}`)}\n`);
    return code;
  }
}

async function serveCommand(argv: string[], stdout: NodeJS.WritableStream, config: ConfigFlags | undefined): Promise<number> {
  const v = parseCommandArgs(argv, RUN_FLAGS);
  if (v.help) {
    stdout.write(mcpHelp());
    return EXIT.ok;
  }
  const refused = NOT_FOR_MCP.find((flag) => v[flag] !== undefined);
  if (refused) throw new UsageError(`mcp does not take --${refused}: the agent's tools choose what each run does (start_run, rerun_traces, estimate_run).`);
  const context = await mcpContext(v, argv, config);
  await serve(context);
  return EXIT.ok;
}

/** The tools' context from the flags: the state folder, the service, the defaults, and the runs when a target and token are given. */
async function mcpContext(v: ReturnType<typeof parseCommandArgs<typeof RUN_FLAGS>>, argv: string[], config: ConfigFlags | undefined): Promise<ToolContext> {
  const stateDir = stateDirOf(v['state-dir']);
  const baseUrl = v['base-url'] ?? process.env.EVAL_RUNNER_BASE_URL;
  const defaults = {
    ...(v.kind !== undefined ? { kind: choiceOption(v.kind, 'kind', EVALUATION_KINDS) } : {}),
    ...(v.evaluation !== undefined ? { evaluationId: intOption(v.evaluation, 'evaluation', 0) } : {}),
  };
  const token = process.env.EVAL_RUNNER_TOKEN?.trim();
  // What no tool's answer may carry: the token, and (once the target is read) the target's secrets.
  const secrets = () => Promise.resolve(heldSecrets(token, {}));
  if (!baseUrl) return { stateDir, origin: undefined, defaults, secrets, runs: { why: 'The server has no service: add --base-url URL (or --config FILE) to its command in your agent configuration.' } };
  const args = serviceArgs({ ...v, evaluation: String(defaults.evaluationId ?? 0), kind: defaults.kind ?? 'benchmark' });
  const origin = parseBaseUrl(args.baseUrl).origin;
  if (v.target === undefined) return { stateDir, origin, defaults, secrets, runs: { why: 'The server has no target: add --target KIND and its flags (or a --config FILE naming one) to its command in your agent configuration.' } };
  if (!token) return { stateDir, origin, defaults, secrets, runs: { why: "Set EVAL_RUNNER_TOKEN to your personal access token in the server's environment (the env of its entry in your agent configuration), then restart the server." } };
  // As run does, before anything is sent: where the token and each variable go is allowed (no terminal here: by --allow-env).
  const own = ownValues(argv, config, RUN_FLAGS);
  await allowTokenOrigin(args.baseUrl, v, own, config);
  const plan = await allowedTargetPlan(v, own, config?.file);
  const options = runOptionsOf(v);
  const { price } = costChoices(v, plan.parts.spec);
  const encoding = choiceOption(v.encoding, 'encoding', REQUEST_ENCODINGS, 'urlencoded');
  const runs = fewRunners(mcpRunStarter({ args, token, stateDir, encoding, options, plan, flags: v, price }));
  process.stderr.write(`eval-runner mcp: runs go to ${safeText(runs.target)} at ${origin}; journals in ${stateDir}.\n`);
  const held = heldSecrets(token, plan.parts.secrets);
  return { stateDir, origin, defaults, runs, secrets: () => Promise.resolve(held) };
}

/** How many runners one server's tools may have started and still running: a looping agent cannot fill the process table. */
export const MAX_LIVE_RUNNERS = 4;

/** The starter, refusing a start while MAX_LIVE_RUNNERS it started are alive. */
function fewRunners(runs: RunStarter): RunStarter {
  const pids = new Set<number>();
  let starting = 0;
  return {
    ...runs,
    start: async (key, request) => {
      for (const pid of pids) if (!isAlive(pid)) pids.delete(pid);
      if (pids.size + starting >= MAX_LIVE_RUNNERS) {
        throw new ToolError(`This server has ${MAX_LIVE_RUNNERS} runs going on already, the most it starts at once: follow them with get_run_status and wait for one to finish, or stop one with cancel_run, then start again.`);
      }
      starting++;
      try {
        const started = await runs.start(key, request);
        pids.add(started.pid);
        return started;
      } finally {
        starting--;
      }
    },
  };
}

/** The MCP server over stdio until the client closes it: every tool of the table, answered through callTool. */
async function serve(context: ToolContext): Promise<void> {
  const mcp = new McpServer({ name: 'eval-runner', version: TOOL_VERSION }, { capabilities: { tools: { listChanged: false } } });
  // The table's own schemas and checks, rather than the SDK's: its words for a bad input name the field and the bound.
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: AGENT_TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: inputJsonSchema(t) as { type: 'object' }, annotations: { title: t.title, ...t.hints } })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = AGENT_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `No tool "${safeText(request.params.name.slice(0, 100))}": the tools are ${AGENT_TOOLS.map((t) => t.name).join(', ')}.` }] };
    const answer = await callTool(tool, request.params.arguments, context);
    if (answer.isError) return { isError: true, content: [{ type: 'text', text: answer.text }] };
    return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
  });
  const transport = new StdioServerTransport();
  // The SDK ends the connection on a line over its limit (10 MiB) without a word, and the server would exit 0: say why.
  transport.onerror = (error) => process.stderr.write(`eval-runner mcp: ${transportProblem(error)}\n`);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    // The client went away (its session ended): the server ends; the runs it started go on.
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await mcp.connect(transport);
  process.stderr.write(`eval-runner mcp ${TOOL_VERSION}: serving ${AGENT_TOOLS.length} tools on stdio.\n`);
  await closed;
  await mcp.close();
}

/** A transport's error in a line; a message over the SDK's line limit, which ends the connection, in words. */
function transportProblem(error: Error): string {
  const over = /exceeded maximum size of (\d+) bytes/.exec(error.message);
  if (over) return `a message over ${Math.round(Number(over[1]) / 1048576)} MiB ended the connection; the client must send smaller ones.`;
  return safeText(error.message.slice(0, 300));
}
