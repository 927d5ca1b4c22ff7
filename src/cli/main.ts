import { explain } from './common';
import { demoCommand } from './demoCommand';
import { EXIT } from './exitCodes';
import { exportCommand, promptsCommand, statusCommand, submitCommand } from './inspectCommands';
import { runCommand } from './runCommand';
import { sandboxCommand } from './sandboxCommand';
import { safeText } from './terminalText';

const HELP = `Usage: eval-runner <command> [options]

Commands:
  run         run an evaluation against a target, resumably
  prompts     list an evaluation's prompts
  submit      submit one answer
  status      local progress of an evaluation (from its journal)
  export      export results as JSONL or CSV
  sandbox     start the local reference service
  demo        the whole loop offline, on an in-process sandbox
Run "eval-runner <command> --help" for a command's options.
`;

type Command = (argv: string[], out: NodeJS.WritableStream) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  run: runCommand,
  prompts: promptsCommand,
  submit: submitCommand,
  status: statusCommand,
  export: exportCommand,
  sandbox: sandboxCommand,
  demo: demoCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`eval-runner: unknown command "${safeText(name)}".\n${HELP}`);
    return EXIT.usage;
  }
  try {
    return await command(rest, process.stdout);
  } catch (error) {
    const { message, code } = explain(error);
    const usageHint = code === EXIT.usage ? `\nRun "eval-runner ${name} --help" for usage.` : '';
    process.stderr.write(safeText(`eval-runner ${name}: ${message}${usageHint}`) + '\n');
    return code;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`eval-runner: ${safeText(String(error))}\n`);
    process.exitCode = 1;
  },
);
