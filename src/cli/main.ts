import { boundHeapGrowth, configToArgs, RunConfigError, TOOL_VERSION } from '../core';
import type { ConfigScope } from '../core';
import { explain } from './common';
import { extractConfig, readConfigFile } from './configFile';
import type { ConfigFlags } from './configFile';
import type { NamingFile } from './secretUses';
import { nearest } from './args';
import { UsageError } from './exitCodes';
import { demoCommand } from './demoCommand';
import { EXIT } from './exitCodes';
import { exportCommand, promptsCommand, reportCommand, statusCommand, submitCommand } from './inspectCommands';
import { listCommand } from './listCommand';
import type * as McpModule from './mcpCommand';
import { runCommand } from './runCommand';
import { sandboxCommand } from './sandboxCommand';
import { pauseCommand, resumeCommand, setCommand } from './steerCommands';
import { safeText } from './terminalText';

const HELP = `Usage: eval-runner <command> [options]

Commands:
  run         run an evaluation against a target, resumably
  prompts     list an evaluation's prompts
  submit      submit one answer
  status      local progress of an evaluation (from its journal)
  list        every evaluation in the state folders: its traces, last run, and a run going on now
  pause       pause the run of an evaluation going on (wherever it was started)
  resume      resume it
  set         change a run going on: set --concurrency N
  export      export results as JSONL or CSV
  report      one self-contained HTML report of the runs and traces, for a reviewer
  sandbox     start the local reference service
  demo        the whole loop offline, on an in-process sandbox
  mcp         a Model Context Protocol server on stdio: coding agents run and read evaluations
Run "eval-runner <command> --help" (or "eval-runner help <command>") for a command's options.

  --config FILE   (run, mcp, status, export, report, submit, prompts) the extension's settings as JSON, without the
                  "evalRunner." prefix: baseUrl, evaluations, target, concurrency, ...; comments and trailing
                  commas allowed, as in settings.json; relative paths are read from the file's folder; flags
                  override it; never secrets (they come from environment variables)
  --version, -v   the version
`;

/** A command; `config`: the --config file whose flags argv starts with. */
type Command = (argv: string[], out: NodeJS.WritableStream, config?: ConfigFlags) => Promise<number>;

/** Commands that take --config FILE, and which of its settings. */
const CONFIG_SCOPES: Readonly<Record<string, ConfigScope>> = { run: 'run', status: 'journal', pause: 'journal', resume: 'journal', set: 'journal', export: 'journal', report: 'journal', submit: 'journal', prompts: 'service', mcp: 'run' };

const COMMANDS: Readonly<Record<string, Command>> = {
  run: runCommand,
  prompts: promptsCommand,
  submit: submitCommand,
  status: statusCommand,
  list: listCommand,
  pause: pauseCommand,
  resume: resumeCommand,
  set: setCommand,
  export: exportCommand,
  report: reportCommand,
  sandbox: sandboxCommand,
  demo: demoCommand,
  // The MCP server, with its SDK, is a bundle of its own (dist/mcp.js): no other command loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  mcp: (argv, out, config) => (require('./mcpCommand') as typeof McpModule).mcpCommand(argv, out, config),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`eval-runner ${TOOL_VERSION} (Node.js ${process.versions.node})\n`);
    return EXIT.ok;
  }
  if (name === 'help' && rest[0] !== undefined) return main([rest[0], '--help']);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    // As for flags: a near name is offered, the whole help only when nothing is near.
    const near = nearest(name, Object.keys(COMMANDS));
    process.stderr.write(near ? `eval-runner: unknown command "${safeText(name)}": did you mean ${near}?\nRun "eval-runner --help" for every command.\n` : `eval-runner: unknown command "${safeText(name)}".\n${HELP}`);
    return EXIT.usage;
  }
  try {
    const scope = CONFIG_SCOPES[name];
    const { path, rest: own } = scope ? extractConfig(rest) : { path: undefined, rest };
    // The config's settings first: every flag on the command line overrides them. The command is told which
    // flags came from the file: variables a file names are sent only once the user allows them.
    const config = path ? fromConfig(path, own, scope!) : undefined;
    return await command(config ? [...config.flags, ...own] : own, process.stdout, config && { file: config.file, count: config.flags.length });
  } catch (error) {
    if (outputClosed && isClosedPipe(error)) return EXIT.ok;
    const { message, code } = explain(error);
    const usageHint = code === EXIT.usage ? `\nRun "eval-runner ${name} --help" for usage.` : '';
    process.stderr.write(safeText(`eval-runner ${name}: ${message}${usageHint}`) + '\n');
    return code;
  }
}

/**
 * A reader that stops early (`status | head -1`) closes the pipe: not a failure, and no stack trace. What is left
 * to write is dropped (writes say they succeeded, so nothing waits for a drain that never comes) and the command
 * ends as it would have.
 */
let outputClosed = false;
function endQuietlyOnClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: unknown) => {
      if (!isClosedPipe(error)) throw error;
      outputClosed = true;
      stream.write = () => true;
    });
  }
}

function isClosedPipe(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}

endQuietlyOnClosedPipes();
boundHeapGrowth();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`eval-runner: ${safeText(String(error))}\n`);
    process.exitCode = 1;
  },
);

function fromConfig(path: string, argv: readonly string[], scope: ConfigScope): { flags: string[]; file: NamingFile } {
  try {
    const { config, sha256 } = readConfigFile(path);
    return { flags: configToArgs(config, argv, scope), file: { flag: '--config', path, sha256 } };
  } catch (error) {
    throw error instanceof RunConfigError ? new UsageError(error.message) : error;
  }
}
